package deploy

import (
	"errors"
	"maps"
	"reflect"
	"slices"

	"gopkg.in/yaml.v3"

	"servesim/internal/strictyaml"
)

// Keys is cfg as deployment-YAML keys, every key present (but those
// left out at zero or at their default, see key.omitZero and
// key.omitDefault), with the values a
// YAML decoder gives back (int, float64, string, bool, []any, map[string]any;
// durations as Go duration strings): the form a trace header keeps in
// x_ext.deployment.
func (c Config) Keys() (map[string]any, error) {
	m := map[string]any{}
	d := Default()
	for _, k := range keyList() {
		if k.omitZero && reflect.ValueOf(k.field(&c)).Elem().IsZero() {
			continue
		}
		if k.omitDefault && reflect.DeepEqual(reflect.ValueOf(k.field(&c)).Elem().Interface(), reflect.ValueOf(k.field(&d)).Elem().Interface()) {
			continue
		}
		m[k.name] = k.header(&c)
	}
	return m, nil
}

// KeyNames lists every deployment-YAML key, sorted.
func KeyNames() []string {
	var names []string
	for _, k := range keyList() {
		names = append(names, k.name)
	}
	slices.Sort(names)
	return names
}

// keysByName indexes keyList by YAML key.
func keysByName() map[string]key {
	out := map[string]key{}
	for _, k := range keyList() {
		out[k.name] = k
	}
	return out
}

// FromKeys applies deployment-YAML keys (a trace header's x_ext.deployment)
// to base, as Decode applies a file. Keys this version does not know are
// returned, not refused: a trace may come from a newer version. A value of
// the wrong type is an error naming its key under prefix (e.g.
// "cap.yaml: x_ext.deployment.max_num_seqs").
func FromKeys(prefix string, keys map[string]any, base Config) (Config, []string, error) {
	byName := keysByName()
	cfg := base
	var unknown []string
	for _, name := range slices.Sorted(maps.Keys(keys)) {
		k, ok := byName[name]
		if !ok {
			unknown = append(unknown, name)
			continue
		}
		v := keys[name]
		if empty(v) {
			v = nil // an empty list or map is unset (nil), as in a Config never given one
		}
		var n yaml.Node
		if err := n.Encode(v); err != nil {
			return base, nil, invalid("%s.%s: %v", prefix, name, err)
		}
		if err := k.decode("", &n, &cfg); err != nil {
			var e *strictyaml.Error
			if errors.As(err, &e) {
				err = errors.New(e.Msg) // the header's value has no place of its own
			}
			return base, nil, invalid("%s.%s: %v", prefix, name, err)
		}
	}
	return cfg, unknown, nil
}

func empty(v any) bool {
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// KeyAliases maps deployment keys to the other names users type for them
// by habit: BLIS's (hardware, hardware_config, max_num_running_reqs,
// max_num_scheduled_tokens, block_size_in_tokens, tp) and vLLM's
// (tensor_parallel_size, pipeline_parallel_size). A deployment YAML
// accepts them as keys, and the flags (Flags) answer to them with dashes.
func KeyAliases() map[string][]string {
	out := map[string][]string{}
	for _, k := range keyList() {
		if len(k.aliases) > 0 {
			out[k.name] = slices.Clone(k.aliases)
		}
	}
	return out
}

// serverKeys are the keys that say which server a deployment is: the
// model, its GPUs (each P/D pool's too) and how it is split over them, and
// what follows from them.
func serverKeys() []string {
	keys := []string{"model", "gpu", "hardware_file", "tensor_parallel", "data_parallel", "pipeline_parallel",
		"total_kv_blocks", "max_model_len", "kv_cache_dtype", "quantization"}
	for _, pool := range PoolNames() {
		keys = append(keys, pool+"_gpu", pool+"_tensor_parallel", pool+"_total_kv_blocks")
	}
	return keys
}

// SameServer reports whether every one of cfgs is the same server (model,
// GPU, parallelism, KV cache) as the first.
func SameServer(cfgs []Config) bool {
	byName := keysByName()
	for _, c := range cfgs[min(1, len(cfgs)):] {
		for _, n := range serverKeys() {
			if !byName[n].same(&cfgs[0], &c) {
				return false
			}
		}
	}
	return true
}

// Common is what every one of cfgs states alike: each key on which they
// all agree, over the defaults; a key they disagree on keeps its default.
func Common(cfgs []Config) Config {
	out := Default()
	if len(cfgs) == 0 {
		return out
	}
	for _, k := range keyList() {
		agree := true
		for i := 1; i < len(cfgs) && agree; i++ {
			agree = k.same(&cfgs[0], &cfgs[i])
		}
		if agree {
			k.copyFrom(&out, &cfgs[0])
		}
	}
	return out
}
