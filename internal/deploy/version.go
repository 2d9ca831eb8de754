package deploy

import (
	"fmt"
	"strconv"
	"strings"

	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

// The vLLM versions a deployment models, when it does not say.
const (
	// DefaultVLLMVersion is what the physics model's defaults describe: a
	// current vLLM (asynchronous scheduling on).
	DefaultVLLMVersion = "0.23.0"
	// BLISVLLMVersion is what BLIS's coefficients were trained on (its
	// defaults.yaml keys them by vLLM v0.11.0): the trained-physics,
	// roofline and blackbox models reproduce BLIS, and BLIS schedules
	// synchronously.
	BLISVLLMVersion = "0.11.0"
	// AsyncSchedulingSince is the first vLLM release that schedules
	// asynchronously by default (vllm-project/vllm#27614, early 2026).
	AsyncSchedulingSince = "0.14.0"
)

// version is a parsed vLLM release, major.minor.patch.
type version [3]int

// parseVersion reads "0.19.0", "v0.19", "0.19.0rc1" or "0.19.0+cu128":
// the first three numbers count, the rest is ignored.
func parseVersion(s string) (version, error) {
	var v version
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.SplitN(t, ".", 3)
	if t == "" || len(parts) < 2 {
		return v, fmt.Errorf("vllm-version %q: want major.minor[.patch], e.g. 0.19.0", s)
	}
	for i, p := range parts {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		if end == 0 || (i < 2 && end != len(p)) {
			return v, fmt.Errorf("vllm-version %q: want major.minor[.patch], e.g. 0.19.0", s)
		}
		n, err := strconv.Atoi(p[:end])
		if err != nil || n > 1_000_000 {
			return v, fmt.Errorf("vllm-version %q: want major.minor[.patch], e.g. 0.19.0", s)
		}
		v[i] = n
	}
	return v, nil
}

func (v version) atLeast(w version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] > w[i]
		}
	}
	return true
}

// resolveScheduling fills the vLLM version (the latency model's when not
// given) and whether the instance schedules asynchronously (from the
// version, unless the deployment says). Asynchronous scheduling applies to
// the vllm batching without pipeline parallelism, as in vLLM.
func (r *Resolved) resolveScheduling(kind latency.Kind) error {
	v, err := parseVersion(r.VLLMVersion)
	if err != nil {
		return invalid("deployment: %v", err)
	}
	since, _ := parseVersion(AsyncSchedulingSince)
	async := v.atLeast(since)
	if r.AsyncScheduling != nil {
		async = *r.AsyncScheduling
	}
	if r.Batching != string(instance.BatchVLLM) || r.PipelineParallel > 1 {
		async = false
	}
	r.AsyncScheduling = &async
	r.Instance.AsyncScheduling = async
	for i := range r.ClusterConfig.Instances {
		r.ClusterConfig.Instances[i].AsyncScheduling = async
	}
	return nil
}
