package deploy

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Keys is cfg as deployment-YAML keys, every key present, with the values a
// YAML decoder gives back (int, float64, string, bool, []any, map[string]any;
// durations as Go duration strings): the form a trace header keeps in
// x_ext.deployment. A key a newer Config gains travels with no work here.
func (c Config) Keys() (map[string]any, error) {
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("deployment: encode: %w", err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("deployment: encode: %w", err)
	}
	return m, nil
}

// KeyNames lists every deployment-YAML key Config knows, sorted.
func KeyNames() []string {
	var names []string
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			switch {
			case opts == "inline":
				walk(f.Type)
			case name != "" && name != "-":
				names = append(names, name)
			}
		}
	}
	walk(reflect.TypeOf(Config{}))
	slices.Sort(names)
	return names
}

// FromKeys applies deployment-YAML keys (a trace header's x_ext.deployment)
// to base, as Decode applies a file. Keys this version does not know are
// returned, not refused: a trace may come from a newer version. A value of
// the wrong type is an error naming its key under prefix (e.g.
// "cap.yaml: x_ext.deployment.max_num_seqs").
func FromKeys(prefix string, keys map[string]any, base Config) (Config, []string, error) {
	known := map[string]bool{}
	for _, k := range KeyNames() {
		known[k] = true
	}
	cfg := base
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !known[k] {
			unknown = append(unknown, k)
			continue
		}
		v := keys[k]
		if empty(v) {
			v = nil // an empty list or map is unset (nil), as in a Config never given one
		}
		b, err := yaml.Marshal(map[string]any{k: v})
		if err == nil {
			err = yaml.Unmarshal(b, &cfg)
		}
		if err != nil {
			msg := strings.TrimPrefix(yamlMessage(err), "line 1: ")
			return base, nil, invalid("%s.%s: %s", prefix, k, msg)
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
