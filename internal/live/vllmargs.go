package live

import (
	"fmt"
	"strconv"
	"strings"

	"servesim/internal/httpload"
)

// maxServeArgsBytes bounds --vllm-args.
const maxServeArgsBytes = 64 << 10

// serveFlag is one `vllm serve` flag that states a deployment key.
type serveFlag struct {
	key   string                     // deployment key it sets
	parse func(string) (any, error)  // its value; nil for a boolean flag
	value func(on bool) (any, error) // a boolean flag's value (--x / --no-x)
	names []string                   // the flag's spellings, without dashes
}

// serveFlags are the `vllm serve` flags that say something the simulator
// models, each mapped to its deployment key (the keys of run --deployment).
// observe records only the keys a deployment has.
func serveFlags() []serveFlag {
	num := func(s string) (any, error) { return parseCount(s) }
	flt := func(s string) (any, error) { return strconv.ParseFloat(s, 64) }
	str := func(s string) (any, error) { return s, nil }
	on := func(b bool) (any, error) { return b, nil }
	return []serveFlag{
		{key: "model", parse: str, names: []string{"model"}},
		{key: "tensor_parallel", parse: num, names: []string{"tensor-parallel-size", "tp"}},
		{key: "pipeline_parallel", parse: num, names: []string{"pipeline-parallel-size", "pp"}},
		{key: "num_instances", parse: num, names: []string{"data-parallel-size", "dp"}},
		{key: "max_num_seqs", parse: num, names: []string{"max-num-seqs"}},
		{key: "max_num_batched_tokens", parse: num, names: []string{"max-num-batched-tokens"}},
		{key: "block_size", parse: num, names: []string{"block-size"}},
		{key: "gpu_memory_utilization", parse: flt, names: []string{"gpu-memory-utilization"}},
		{key: "max_model_len", parse: num, names: []string{"max-model-len"}},
		{key: "total_kv_blocks", parse: num, names: []string{"num-gpu-blocks-override"}},
		{key: "long_prefill_token_threshold", parse: num, names: []string{"long-prefill-token-threshold"}},
		{key: "scheduler", parse: func(s string) (any, error) {
			switch s {
			case "fcfs":
				return "fcfs", nil
			case "priority":
				return "priority-fcfs", nil
			}
			return nil, fmt.Errorf("%q is not fcfs or priority", s)
		}, names: []string{"scheduling-policy"}},
		{key: "enable_prefix_caching", value: on, names: []string{"enable-prefix-caching"}},
		{key: "enable_chunked_prefill", value: on, names: []string{"enable-chunked-prefill"}},
		{key: "async_scheduling", value: on, names: []string{"async-scheduling"}},
		{key: "kv_cache_dtype", parse: str, names: []string{"kv-cache-dtype"}},
		{key: "quantization", parse: str, names: []string{"quantization", "q"}},
		{key: "enforce_eager", value: on, names: []string{"enforce-eager"}},
		{key: "max_cudagraph_capture_size", parse: num, names: []string{"max-cudagraph-capture-size"}},
	}
}

// parseCount reads an integer as vLLM accepts it: 8192, or with a suffix
// k/m/g (powers of 1000) or K/M/G (powers of 1024), as in --max-model-len 32k.
func parseCount(s string) (int, error) {
	mult := 1
	if n := len(s); n > 1 {
		switch s[n-1] {
		case 'k':
			mult = 1000
		case 'm':
			mult = 1000_000
		case 'g':
			mult = 1000_000_000
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || v > (1<<31-1)/mult {
		return 0, fmt.Errorf("%q is not a count", s)
	}
	return v * mult, nil
}

// parseServeArgs reads a `vllm serve` command line (with or without
// "vllm serve", after any environment words VAR=value, the model as its
// first positional argument or --model) and
// returns the deployment keys its flags state. Flags it does not model are
// skipped, and so is the next word when it does not start with "-" (taken
// as their value: give the model first, as vLLM's own usage line does); a
// malformed value of a flag it knows is an error naming the flag.
func parseServeArgs(line string) (map[string]any, error) {
	if len(line) > maxServeArgsBytes {
		return nil, fmt.Errorf("longer than %d bytes", maxServeArgsBytes)
	}
	words, err := httpload.CommandWords(line)
	if err != nil {
		return nil, err
	}
	byName := map[string]serveFlag{}
	for _, f := range serveFlags() {
		for _, n := range f.names {
			byName[n] = f
		}
	}
	out := map[string]any{}
	positional := 0
	for i := 0; i < len(words); i++ {
		w := words[i].Text
		if !strings.HasPrefix(w, "-") || w == "-" {
			if positional == 0 && (w == "vllm" || w == "serve" || w == "env") {
				continue
			}
			if _, _, env := httpload.EnvWord(w); env && positional == 0 {
				continue // VAR=value before the command: the environment, not the model
			}
			if positional == 0 {
				out["model"] = w
			}
			positional++
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
		neg := false
		f, known := byName[name]
		if !known {
			if rest, ok := strings.CutPrefix(name, "no-"); ok {
				if f, known = byName[rest]; known && f.value != nil {
					neg = true
				}
			}
		}
		takesNext := func() bool { return !hasVal && i+1 < len(words) && !strings.HasPrefix(words[i+1].Text, "-") }
		switch {
		case !known:
			if takesNext() {
				i++ // an unknown flag's value
			}
		case f.value != nil:
			on := !neg
			if hasVal {
				b, err := strconv.ParseBool(strings.ToLower(val))
				if err != nil {
					return nil, fmt.Errorf("%s: %q is not true or false", w, val)
				}
				on = b != neg
			}
			v, _ := f.value(on)
			out[f.key] = v
		default:
			if !hasVal {
				if !takesNext() {
					return nil, fmt.Errorf("--%s needs a value", name)
				}
				i++
				val = words[i].Text
			}
			v, err := f.parse(val)
			if err != nil {
				return nil, fmt.Errorf("--%s: %v", name, err)
			}
			out[f.key] = v
		}
	}
	return out, nil
}
