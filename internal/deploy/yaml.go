package deploy

import (
	"slices"

	"gopkg.in/yaml.v3"

	"servesim/internal/infile"
	"servesim/internal/strictyaml"
)

// Load reads a deployment YAML on top of base: keys present in the file
// replace base's values. Every error names file:line:column and the key.
func Load(path string, base Config) (Config, error) {
	data, err := infile.ReadFile(path, infile.ConfigBytes)
	if err != nil {
		return base, invalid("deployment: %v", err)
	}
	return Decode(path, data, base)
}

// Decode is Load on bytes already read; name is used in errors. It refuses
// an unknown key (with the nearest known one), a key given twice, a value
// of the wrong type, and a value that is invalid alone (max_num_seqs: 0);
// values that must agree with others are checked by Resolve, once the
// flags have been applied.
func Decode(name string, data []byte, base Config) (Config, error) {
	cfg, _, err := decodeFile(name, data, base)
	return cfg, err
}

// decodeFile is Decode that also returns the keys the file sets (aliases
// under the key they stand for), in the file's order.
func decodeFile(name string, data []byte, base Config) (Config, []string, error) {
	root, err := strictyaml.Parse(name, data)
	if err != nil || root == nil {
		return base, nil, err // nil, nil: empty or only comments
	}
	if err := strictyaml.WantMapping(name, root, "", "deployment keys"); err != nil {
		return base, nil, err
	}
	keys, err := fileKeys(name, root)
	if err != nil {
		return base, nil, err
	}
	cfg := base
	values := map[string]*yaml.Node{}
	var set []string
	for i, k := range keys {
		v := root.Content[2*i+1]
		if err := k.decode(name, v, &cfg); err != nil {
			return base, nil, err
		}
		values[k.name] = v
		set = append(set, k.name)
	}
	for _, p := range cfg.problems() {
		if v, ok := values[p.key]; ok {
			return base, nil, strictyaml.At(name, v, keyPath(p.key), "%s", p.msg)
		}
	}
	return cfg, set, nil
}

// fileKeys are the keys of the mapping m, one for each of its entries:
// aliases stand for their key, and a key unknown or given twice (under any
// of its names) is an error at its place.
func fileKeys(name string, m *yaml.Node) ([]key, error) {
	byName := map[string]key{}
	var known []string
	for _, k := range keyList() {
		for _, n := range append([]string{k.name}, k.aliases...) {
			byName[n] = k
			known = append(known, n)
		}
	}
	type place struct {
		line int
		name string
	}
	seen := map[string]place{}
	var keys []key
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn := m.Content[i]
		k, ok := byName[kn.Value]
		if !ok {
			return nil, strictyaml.UnknownKey(name, kn, "", slices.Sorted(slices.Values(known)))
		}
		if prev, ok := seen[k.name]; ok {
			if prev.name == kn.Value {
				return nil, strictyaml.Keys{kn.Value: prev.line}.Add(name, kn, "")
			}
			return nil, strictyaml.At(name, kn, "", "keys %s and %s (line %d) name the same setting, %s: give one",
				kn.Value, prev.name, prev.line, k.name)
		}
		seen[k.name] = place{kn.Line, kn.Value}
		keys = append(keys, k)
	}
	return keys, nil
}
