package deploy

import (
	"fmt"
	"slices"
	"strconv"

	"servesim/internal/flagspec"
)

// ServeFlag is one `vllm serve` flag: the deployment key it states, or no
// key when the simulator accepts it and ignores it (so that a pasted serve
// command runs, with a note).
type ServeFlag struct {
	Names []string // its spellings, without dashes
	// Key is the deployment key it sets (the keys of run --deployment);
	// "" = no key.
	Key string
	// Switch is set for a boolean flag (--x / --no-x / --x=false); else
	// the flag takes a value.
	Switch bool
	// Parse turns a keyed flag's value into the key's value.
	Parse func(string) (any, error)
	// Unmodeled says, for a flag with no key, what it would change that
	// the simulator does not model; "" = it does not change how fast the
	// server runs.
	Unmodeled string
}

// ServeFlags are the `vllm serve` flags this version knows: those that
// state a deployment key, then those accepted and ignored.
func ServeFlags() []ServeFlag {
	num := func(s string) (any, error) { return ParseCount(s) }
	flt := func(s string) (any, error) { return strconv.ParseFloat(s, 64) }
	str := func(s string) (any, error) { return s, nil }
	keyed := func(key string, parse func(string) (any, error), names ...string) ServeFlag {
		return ServeFlag{Names: names, Key: key, Parse: parse}
	}
	onOff := func(key string) ServeFlag {
		return ServeFlag{Names: []string{flagName(key)}, Key: key, Switch: true}
	}
	ignored := func(value bool, names ...string) []ServeFlag {
		var out []ServeFlag
		for _, n := range names {
			out = append(out, ServeFlag{Names: []string{n}, Switch: !value})
		}
		return out
	}
	return slices.Concat(
		[]ServeFlag{
			keyed("model", str, "model"),
			keyed("tensor_parallel", num, "tensor-parallel-size", "tp"),
			keyed("pipeline_parallel", num, "pipeline-parallel-size", "pp"),
			keyed("num_instances", num, "data-parallel-size", "dp"),
			keyed("max_num_seqs", num, "max-num-seqs"),
			keyed("max_num_batched_tokens", num, "max-num-batched-tokens"),
			keyed("block_size", num, "block-size"),
			keyed("gpu_memory_utilization", flt, "gpu-memory-utilization"),
			keyed("max_model_len", num, "max-model-len"),
			keyed("total_kv_blocks", num, "num-gpu-blocks-override"),
			keyed("long_prefill_token_threshold", num, "long-prefill-token-threshold"),
			keyed("scheduler", vllmScheduler, "scheduling-policy"),
			onOff("enable_prefix_caching"),
			onOff("enable_chunked_prefill"),
			onOff("async_scheduling"),
			keyed("kv_cache_dtype", str, "kv-cache-dtype"),
			keyed("quantization", str, "quantization", "q"),
			onOff("enforce_eager"),
			keyed("max_cudagraph_capture_size", num, "max-cudagraph-capture-size"),
		},
		ignored(true, "host", "port", "served-model-name", "api-key", "download-dir", "tokenizer", "revision",
			"tokenizer-revision", "tokenizer-mode", "chat-template", "tool-call-parser", "reasoning-parser",
			"uvicorn-log-level", "max-log-len", "load-format", "config-format", "root-path", "allowed-origins",
			"ssl-keyfile", "ssl-certfile", "response-role", "generation-config", "max-logprobs",
			"distributed-executor-backend", "hf-overrides", "override-generation-config"),
		ignored(false, "trust-remote-code", "disable-log-stats", "disable-log-requests", "enable-log-requests",
			"enable-auto-tool-choice", "disable-fastapi-docs", "disable-frontend-multiprocessing", "enable-sleep-mode"),
		[]ServeFlag{
			{Names: []string{"dtype"}, Unmodeled: "the model config's dtype is simulated"},
			{Names: []string{"swap-space"}, Unmodeled: "preempted requests are recomputed, never swapped"},
			{Names: []string{"cpu-offload-gb"}, Unmodeled: "weights are taken to stay on the GPU"},
			{Names: []string{"speculative-config"}, Unmodeled: "every step decodes one token a request"},
			{Names: []string{"compilation-config"}, Unmodeled: "vLLM's default compilation is simulated; see --enforce-eager and --max-cudagraph-capture-size"},
			{Names: []string{"disable-custom-all-reduce"}, Switch: true, Unmodeled: "all-reduces take the physics model's link terms"},
			{Names: []string{"enable-lora"}, Switch: true, Unmodeled: "no adapter costs are simulated"},
		})
}

// flagName is a deployment key's flag spelling: max_num_seqs → max-num-seqs.
func flagName(key string) string {
	b := []byte(key)
	for i, c := range b {
		if c == '_' {
			b[i] = '-'
		}
	}
	return string(b)
}

// vllmScheduler maps vLLM's --scheduling-policy onto the scheduler key.
func vllmScheduler(s string) (any, error) {
	switch s {
	case "fcfs":
		return "fcfs", nil
	case "priority":
		return "priority-fcfs", nil
	}
	return nil, fmt.Errorf("%q is not fcfs or priority", s)
}

// ParseCount reads an integer as vLLM accepts it: 8192, or with a suffix
// k/m/g (powers of 1000) or K/M/G (powers of 1024), as in --max-model-len 32k.
func ParseCount(s string) (int, error) {
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

// vllmFlagSpecs are the hidden flags of the serve flags with no key.
func vllmFlagSpecs() []flagspec.Flag {
	var out []flagspec.Flag
	for _, f := range ServeFlags() {
		if f.Key != "" {
			continue
		}
		kind := flagspec.String
		if f.Switch {
			kind = flagspec.Bool
		}
		out = append(out, flagspec.Flag{Name: f.Names[0], Kind: kind, Hidden: true, Category: flagspec.CatDeployment,
			Usage: "vLLM's --" + f.Names[0] + ": accepted and ignored"})
	}
	return out
}

// IgnoredFlagNotes are one line for each `vllm serve` flag given (v holds
// the flags of Flags given) that the simulator accepts and ignores.
func IgnoredFlagNotes(v flagspec.Values) []string {
	var out []string
	for _, f := range ServeFlags() {
		if _, on := v[f.Names[0]]; !on || f.Key != "" {
			continue
		}
		if f.Unmodeled == "" {
			out = append(out, fmt.Sprintf("--%s: a vLLM flag that does not change how fast the server runs; ignored", f.Names[0]))
		} else {
			out = append(out, fmt.Sprintf("--%s: a vLLM flag the simulator does not model (%s); ignored", f.Names[0], f.Unmodeled))
		}
	}
	return out
}
