package live

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"

	"servesim/internal/clip"
	"servesim/internal/httpload"
)

// Bounds of what a server may say of itself and observe records.
const (
	maxFactCount     = 1<<31 - 1 // KV blocks, tokens of context
	maxFactBlockSize = 1 << 16   // tokens a KV block
	maxFactNameBytes = 256       // a served model's name
)

// versionRE is a version as vLLM reports it: 0.11.0, 0.10.2rc1+cu128,
// 0.6.3.post1.
const versionRE = `^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$`

// factProblem says why a fact the server reported cannot be recorded (a
// reader of the trace, replay first, would refuse it or misread it), ""
// when it can.
func factProblem(key string, v any) string {
	count := func(lo, hi int) string {
		n, ok := v.(int)
		if !ok {
			if f, isFloat := v.(float64); isFloat && f == math.Trunc(f) && math.Abs(f) <= maxFactCount {
				n, ok = int(f), true
			}
		}
		if !ok || n < lo || n > hi {
			return fmt.Sprintf("want a whole number in [%d, %d]", lo, hi)
		}
		return ""
	}
	switch key {
	case "vllm_version":
		if s, ok := v.(string); !ok || !regexp.MustCompile(versionRE).MatchString(s) {
			return "want a version such as 0.11.0 (at most 64 letters, digits and . + _ -)"
		}
	case "model":
		if s, ok := v.(string); !ok || s == "" || len(s) > maxFactNameBytes || httpload.Printable(s) != s {
			return fmt.Sprintf("want a printable name of at most %d bytes", maxFactNameBytes)
		}
	case "block_size":
		return count(1, maxFactBlockSize)
	case "total_kv_blocks", "max_model_len":
		return count(1, maxFactCount)
	case "gpu_memory_utilization":
		if f, ok := v.(float64); !ok || !(f > 0 && f <= 1) {
			return "want a share in (0, 1]"
		}
	case "enable_prefix_caching":
		if _, ok := v.(bool); !ok {
			return "want True or False"
		}
	}
	return ""
}

// dropBadFacts removes from measured every fact factProblem refuses, with a
// warning naming the fact, its value and the rule: an invalid fact is
// never recorded, and nothing is guessed in its place.
func dropBadFacts(measured map[string]any, warn func(string)) {
	for _, k := range slices.Sorted(maps.Keys(measured)) {
		if why := factProblem(k, measured[k]); why != "" {
			warn(fmt.Sprintf("the server reports %s %s: %s; not recorded", k, clip.Text(fmt.Sprintf("%q", fmt.Sprint(measured[k])), 80), why))
			delete(measured, k)
		}
	}
}
