package deploy

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/workload"
)

// KeyAliases maps deployment keys (the flag names with underscores) to the
// other names users type for them by habit: BLIS's (hardware,
// hardware_config, max_num_running_reqs, max_num_scheduled_tokens,
// block_size_in_tokens, tp) and vLLM's (tensor_parallel_size,
// pipeline_parallel_size). A deployment YAML accepts them as keys, and the
// binaries' flags accept them with dashes (internal/cli adds them to the
// flags, so this is the one table of both).
func KeyAliases() map[string][]string {
	return map[string][]string{
		"gpu":                    {"hardware"},
		"hardware_file":          {"hardware_config"},
		"tensor_parallel":        {"tp", "tensor_parallel_size"},
		"pipeline_parallel":      {"pp", "pipeline_parallel_size"},
		"data_parallel":          {"dp", "data_parallel_size"},
		"max_num_seqs":           {"max_num_running_reqs"},
		"max_num_batched_tokens": {"max_num_scheduled_tokens"},
		"block_size":             {"block_size_in_tokens"},
	}
}

// canonicalKeys renames the alias keys of the mapping m to the deployment
// keys they stand for, and checks every key is a deployment key given once
// (yaml.v3 applies KnownFields only when decoding from a stream, not from a
// node). Errors name file:line:column, an unknown key with the nearest
// known name.
func canonicalKeys(name string, m *yaml.Node) error {
	of := map[string]string{}
	names := KeyNames()
	for key, aliases := range KeyAliases() {
		for _, a := range aliases {
			of[a] = key
			names = append(names, a)
		}
	}
	known := yamlKeys(reflect.TypeOf(Config{}))
	type place struct {
		line int
		name string
	}
	seen := map[string]place{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		given := k.Value
		at := fmt.Sprintf("%s:%d:%d", name, k.Line, k.Column)
		if key, ok := of[given]; ok {
			k.Value = key
		}
		if !known[k.Value] {
			msg := fmt.Sprintf("%s: unknown key %q", at, given)
			if s := workload.Closest(given, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return errors.New(msg)
		}
		if prev, ok := seen[k.Value]; ok {
			if prev.name == given {
				return fmt.Errorf("%s: key %s is given twice (first on line %d)", at, given, prev.line)
			}
			return fmt.Errorf("%s: keys %s and %s (line %d) name the same setting, %s: give one", at, given, prev.name, prev.line, k.Value)
		}
		seen[k.Value] = place{k.Line, given}
	}
	return nil
}

// yamlKeys are the YAML keys of the struct type t, inline fields included.
func yamlKeys(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if opts == "inline" {
			for k := range yamlKeys(f.Type) {
				out[k] = true
			}
			continue
		}
		if name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}
