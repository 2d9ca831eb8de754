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
	cfg, set, err := decodeFile(name, data, base)
	if err != nil {
		return base, err
	}
	if err := set.combinations(cfg, nil); err != nil {
		return base, err
	}
	return cfg, nil
}

// fileSet is what a deployment file sets: the names of its keys (aliases under
// the key they stand for) in the file's order, and their value nodes.
type fileSet struct {
	name   string
	keys   []string
	values map[string]*yaml.Node
}

// combinations is the first problem of cfg with values that must agree
// (pipeline_parallel and max_num_seqs) located at the file's value of the
// last of them the file sets, unless a flag set one of them (byFlag): a
// flag's value has no place in the file.
func (f fileSet) combinations(cfg Config, byFlag func(key string) bool) error {
	for _, p := range cfg.combinations() {
		var at *yaml.Node
		for _, k := range p.keys {
			if byFlag != nil && byFlag(k) {
				at = nil
				break
			}
			if v := f.values[k]; v != nil && (at == nil || v.Line > at.Line || (v.Line == at.Line && v.Column > at.Column)) {
				at = v
			}
		}
		if at != nil {
			return strictyaml.At(f.name, at, "", "%s", p.msg)
		}
	}
	return nil
}

// decodeFile is Decode, the values that must agree with others left
// unchecked, that also returns what the file sets.
func decodeFile(name string, data []byte, base Config) (Config, fileSet, error) {
	return decodeKeys(name, data, base, keyList(), "deployment keys")
}

// decodePolicy is decodeFile for a policy bundle: the policy keys only.
func decodePolicy(name string, data []byte, base Config) (Config, fileSet, error) {
	return decodeKeys(name, data, base, policyKeys(), "policy keys")
}

// decodeKeys is decodeFile with the keys the file may hold (list) and what
// they are called in messages (what).
func decodeKeys(name string, data []byte, base Config, list []key, what string) (Config, fileSet, error) {
	set := fileSet{name: name, values: map[string]*yaml.Node{}}
	root, err := strictyaml.Parse(name, data)
	if err != nil || root == nil {
		return base, set, err // nil: empty or only comments
	}
	if err := strictyaml.WantMapping(name, root, "", what); err != nil {
		return base, set, err
	}
	keys, err := fileKeys(name, root, list)
	if err != nil {
		return base, set, err
	}
	cfg := base
	for i, k := range keys {
		v := root.Content[2*i+1]
		if err := k.decode(name, v, &cfg); err != nil {
			return base, set, err
		}
		set.values[k.name] = v
		set.keys = append(set.keys, k.name)
	}
	for _, p := range cfg.problems() {
		if v, ok := set.values[p.key]; ok {
			return base, set, strictyaml.At(name, v, keyPath(p.key), "%s", p.msg)
		}
	}
	return cfg, set, nil
}

// fileKeys are the keys of the mapping m, one for each of its entries:
// aliases stand for their key, and a key not in list, unknown or given
// twice (under any of its names) is an error at its place.
func fileKeys(name string, m *yaml.Node, list []key) ([]key, error) {
	byName := map[string]key{}
	var known []string
	for _, k := range list {
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
			if other, deployment := allKeyNames()[kn.Value]; deployment {
				return nil, strictyaml.At(name, kn, "", "%s is a deployment key, not a policy one: give it in --%s or as a flag", other.name, FileFlag)
			}
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

// allKeyNames indexes keyList by every name and alias.
func allKeyNames() map[string]key {
	out := map[string]key{}
	for _, k := range keyList() {
		for _, n := range append([]string{k.name}, k.aliases...) {
			out[n] = k
		}
	}
	return out
}
