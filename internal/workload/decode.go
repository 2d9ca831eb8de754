package workload

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/infile"
	"servesim/internal/strictyaml"
)

// Load reads and decodes the workload spec file at path (see Decode).
func Load(path string) (*Spec, []string, error) {
	data, err := infile.ReadFile(path, infile.ConfigBytes)
	if err != nil {
		return nil, nil, &Error{File: path, Msg: "read workload spec", Err: err}
	}
	return Decode(path, data, filepath.Dir(path))
}

// Decode decodes and validates a workload spec (docs/workload.md §1–§8). name is
// used in error messages (file:line:column); baseDir resolves relative
// empirical `file:` paths. It returns the spec with defaults resolved and
// warnings (each naming its place) for keys accepted but ignored. Every
// error is an *Error (exit code 2). Bounds that flags may supply
// (num_requests, horizon) are checked by New, after overrides.
func Decode(name string, data []byte, baseDir string) (spec *Spec, warnings []string, err error) {
	defer func() {
		// yaml.v3 is not ours; a panic on some input must still be a clean error.
		if r := recover(); r != nil {
			spec, warnings, err = nil, nil, &Error{File: name, Msg: fmt.Sprintf("invalid YAML (decoder failure: %v)", r)}
		}
	}()
	doc, perr := strictyaml.Parse(name, data)
	if perr != nil {
		return nil, nil, yamlError(perr)
	}
	if doc == nil {
		return nil, nil, &Error{File: name, Msg: "empty workload spec"}
	}
	pos := &positions{file: name, at: map[string][2]int{"": {doc.Line, doc.Column}}}
	w := &walker{pos: pos}
	if e := w.mapping(doc, "spec", ""); e != nil {
		return nil, nil, pos.locate(e)
	}
	// The walk found every unknown key and type error with its position; the
	// strict struct decode below must now succeed.
	var raw rawSpec
	strict := yaml.NewDecoder(bytes.NewReader(data))
	strict.KnownFields(true)
	if e := strict.Decode(&raw); e != nil {
		return nil, nil, &Error{File: name, Msg: strings.TrimPrefix(e.Error(), "yaml: ")}
	}
	spec, warnings, verr := fromRaw(&raw, pos, baseDir)
	if verr != nil {
		return nil, nil, pos.locate(verr)
	}
	return spec, warnings, nil
}

// yamlError is a strictyaml error as an *Error (exit code 2, the same
// wording).
func yamlError(err error) *Error {
	var e *strictyaml.Error
	if errors.As(err, &e) {
		return &Error{File: e.File, Line: e.Line, Column: e.Column, Path: e.Path, Msg: e.Msg}
	}
	return &Error{Msg: err.Error()}
}

// positions maps field paths ("clients[1].arrival.cv") to the line and
// column of their key in the spec file.
type positions struct {
	file string
	at   map[string][2]int
}

// locate fills in the file position of e from its path, walking up to the
// nearest ancestor that has a position (for missing keys: their mapping).
func (p *positions) locate(e *Error) *Error {
	if p == nil || e == nil || e.File != "" || e.Flag != "" {
		return e
	}
	e.File = p.file
	path := e.Path
	for {
		if lc, ok := p.at[path]; ok {
			e.Line, e.Column = lc[0], lc[1]
			return e
		}
		if path == "" {
			return e
		}
		path = parentPath(path)
	}
}

// where is the "file:line:col: " prefix of a warning about path.
func (p *positions) where(path string) string {
	e := p.locate(&Error{Path: path})
	if e.File == "" {
		return path + ": "
	}
	return strings.TrimSuffix(e.Error(), " ") + " "
}

func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// walker checks keys and value shapes against schemaOf, recording positions.
type walker struct {
	pos *positions
}

func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; i < 100 && n.Kind == yaml.AliasNode && n.Alias != nil; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func describe(n *yaml.Node) string { return strictyaml.Describe(n) }

func nodeErr(n *yaml.Node, path, format string, args ...any) *Error {
	return &Error{Line: n.Line, Column: n.Column, Path: path, Msg: fmt.Sprintf(format, args...)}
}

func (w *walker) mapping(n *yaml.Node, obj, path string) *Error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return w.at(nodeErr(n, path, "want a mapping, got %s", describe(n)))
	}
	schema := schemaOf(obj)
	seen := strictyaml.Keys{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return w.at(nodeErr(k, path, "a key must be a plain name, got %s", describe(k)))
		}
		key := k.Value
		child := joinPath(path, key)
		switch {
		case key == "<<":
			return w.at(nodeErr(k, path, "YAML merge keys (<<) are not supported"))
		case unimplementedKey(obj, key):
			return w.at(nodeErr(k, child, "BLIS key %q is recognised but not implemented here", key))
		}
		if e := seen.Add(w.pos.file, k, path); e != nil {
			return yamlError(e)
		}
		f, ok := schema[key]
		if !ok {
			return yamlError(strictyaml.UnknownKey(w.pos.file, k, path, slices.Collect(maps.Keys(schema))))
		}
		w.pos.at[child] = [2]int{k.Line, k.Column}
		if err := w.value(v, f, child); err != nil {
			return err
		}
	}
	return nil
}

// at fills the file name of a walker error (line and column are the node's).
func (w *walker) at(e *Error) *Error {
	e.File = w.pos.file
	return e
}

func (w *walker) value(v *yaml.Node, f field, path string) *Error {
	v = resolve(v)
	if isNull(v) {
		return nil
	}
	scalar := func(want string, target any) *Error {
		if v.Kind != yaml.ScalarNode {
			return w.at(nodeErr(v, path, "want %s, got %s", want, describe(v)))
		}
		if target != nil && strictyaml.Decode("", v, "", target) != nil { // a fraction for an integer too
			return w.at(nodeErr(v, path, "%s is not %s", describe(v), want))
		}
		return nil
	}
	switch f.kind {
	case kString:
		return scalar(strictyaml.TypeWord("string"), nil)
	case kInt:
		var x int64
		return scalar(strictyaml.TypeWord("int64"), &x)
	case kFloat:
		var x float64
		return scalar(strictyaml.TypeWord("float64"), &x)
	case kBool:
		var x bool
		return scalar(strictyaml.TypeWord("bool"), &x)
	case kObject:
		return w.mapping(v, f.obj, path)
	case kList:
		if v.Kind != yaml.SequenceNode {
			return w.at(nodeErr(v, path, "want a list, got %s", describe(v)))
		}
		for i, e := range v.Content {
			ep := fmt.Sprintf("%s[%d]", path, i)
			e = resolve(e)
			w.pos.at[ep] = [2]int{e.Line, e.Column}
			if err := w.mapping(e, f.obj, ep); err != nil {
				return err
			}
		}
		return nil
	case kParams, kTargets:
		if v.Kind != yaml.MappingNode {
			return w.at(nodeErr(v, path, "want a mapping, got %s", describe(v)))
		}
		seen := strictyaml.Keys{}
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := resolve(v.Content[i]), v.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Value == "<<" {
				return w.at(nodeErr(k, path, "a key must be a plain name, got %s", describe(k)))
			}
			child := joinPath(path, k.Value)
			if e := seen.Add(w.pos.file, k, path); e != nil {
				return yamlError(e)
			}
			w.pos.at[child] = [2]int{k.Line, k.Column}
			sub := field{kind: kFloat}
			if f.kind == kTargets {
				sub = field{kind: kObject, obj: f.obj}
			}
			if err := w.value(val, sub, child); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}
