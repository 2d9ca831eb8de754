package deploy

import (
	"fmt"
	"slices"

	"servesim/internal/flagspec"
)

// vllmFlag is a `vllm serve` flag a deployment has no key for: accepted
// on the command line, so that a pasted serve command runs, and named in a
// note.
type vllmFlag struct {
	name      string
	value     bool   // takes a value (else a switch)
	unmodeled string // "" = it does not change how fast the server runs; else what it would change
}

// vllmFlags are the `vllm serve` flags the simulator accepts and ignores.
func vllmFlags() []vllmFlag {
	neutral := func(value bool, names ...string) []vllmFlag {
		var out []vllmFlag
		for _, n := range names {
			out = append(out, vllmFlag{name: n, value: value})
		}
		return out
	}
	return slices.Concat(
		neutral(true, "host", "port", "served-model-name", "api-key", "download-dir", "tokenizer", "revision",
			"tokenizer-revision", "tokenizer-mode", "chat-template", "tool-call-parser", "reasoning-parser",
			"uvicorn-log-level", "max-log-len", "load-format", "config-format", "root-path", "allowed-origins",
			"ssl-keyfile", "ssl-certfile", "response-role", "generation-config", "max-logprobs",
			"distributed-executor-backend", "hf-overrides", "override-generation-config"),
		neutral(false, "trust-remote-code", "disable-log-stats", "disable-log-requests", "enable-log-requests",
			"enable-auto-tool-choice", "disable-fastapi-docs", "disable-frontend-multiprocessing", "enable-sleep-mode"),
		[]vllmFlag{
			{name: "dtype", value: true, unmodeled: "the model config's dtype is simulated"},
			{name: "swap-space", value: true, unmodeled: "preempted requests are recomputed, never swapped"},
			{name: "cpu-offload-gb", value: true, unmodeled: "weights are taken to stay on the GPU"},
			{name: "speculative-config", value: true, unmodeled: "every step decodes one token a request"},
			{name: "compilation-config", value: true, unmodeled: "vLLM's default compilation is simulated; see --enforce-eager and --max-cudagraph-capture-size"},
			{name: "disable-custom-all-reduce", unmodeled: "all-reduces take the physics model's link terms"},
			{name: "enable-lora", unmodeled: "no adapter costs are simulated"},
		})
}

// vllmFlagSpecs are the hidden flags of vllmFlags.
func vllmFlagSpecs() []flagspec.Flag {
	var out []flagspec.Flag
	for _, f := range vllmFlags() {
		kind := flagspec.Bool
		if f.value {
			kind = flagspec.String
		}
		out = append(out, flagspec.Flag{Name: f.name, Kind: kind, Hidden: true, Category: flagspec.CatDeployment,
			Usage: "vLLM's --" + f.name + ": accepted and ignored"})
	}
	return out
}

// IgnoredFlagNotes are one line for each `vllm serve` flag given (v holds
// the flags of Flags given) that the simulator accepts and ignores.
func IgnoredFlagNotes(v flagspec.Values) []string {
	var out []string
	for _, f := range vllmFlags() {
		if _, on := v[f.name]; !on {
			continue
		}
		if f.unmodeled == "" {
			out = append(out, fmt.Sprintf("--%s: a vLLM flag that does not change how fast the server runs; ignored", f.name))
		} else {
			out = append(out, fmt.Sprintf("--%s: a vLLM flag the simulator does not model (%s); ignored", f.name, f.unmodeled))
		}
	}
	return out
}
