package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Load reads and decodes the workload spec file at path (see Decode).
func Load(path string) (*Spec, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, &Error{File: path, Msg: "read workload spec", Err: err}
	}
	return Decode(path, data, filepath.Dir(path))
}

// Decode decodes and validates a workload spec (workload.md §1–§8). name is
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
	pos := &positions{file: name, at: map[string][2]int{}}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if e := dec.Decode(&root); e != nil {
		if errors.Is(e, io.EOF) {
			return nil, nil, &Error{File: name, Msg: "empty workload spec"}
		}
		return nil, nil, yamlError(name, e)
	}
	var extra yaml.Node
	if e := dec.Decode(&extra); !errors.Is(e, io.EOF) {
		return nil, nil, &Error{File: name, Line: extra.Line, Msg: "more than one YAML document"}
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	pos.at[""] = [2]int{doc.Line, doc.Column}
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
		return nil, nil, yamlError(name, e)
	}
	spec, warnings, verr := fromRaw(&raw, pos, baseDir)
	if verr != nil {
		return nil, nil, pos.locate(verr)
	}
	return spec, warnings, nil
}

// yamlError turns a yaml.v3 error ("yaml: line N: msg", possibly inside
// "yaml: unmarshal errors:") into an *Error with its line.
func yamlError(name string, e error) *Error {
	msg := strings.TrimPrefix(e.Error(), "yaml: ")
	msg = strings.TrimSpace(strings.TrimPrefix(msg, "unmarshal errors:"))
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(num); err == nil {
				return &Error{File: name, Line: line, Msg: strings.TrimSpace(text)}
			}
		}
	}
	return &Error{File: name, Msg: msg}
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

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "nothing"
}

func nodeErr(n *yaml.Node, path, format string, args ...any) *Error {
	return &Error{Line: n.Line, Column: n.Column, Path: path, Msg: fmt.Sprintf(format, args...)}
}

func (w *walker) mapping(n *yaml.Node, obj, path string) *Error {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return w.at(nodeErr(n, path, "want a mapping, got %s", describe(n)))
	}
	schema := schemaOf(obj)
	seen := map[string]bool{}
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
		case seen[key]:
			return w.at(nodeErr(k, child, "duplicate key"))
		case unimplementedKey(obj, key):
			return w.at(nodeErr(k, child, "BLIS key %q is recognised but not implemented here", key))
		}
		seen[key] = true
		f, ok := schema[key]
		if !ok {
			msg := fmt.Sprintf("unknown key %q", key)
			if s := closest(key, schema); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return w.at(nodeErr(k, path, "%s", msg))
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
		if target != nil && v.Decode(target) != nil {
			return w.at(nodeErr(v, path, "%s is not %s", describe(v), want))
		}
		return nil
	}
	switch f.kind {
	case kString:
		return scalar("a string", nil)
	case kInt:
		var x int64
		return scalar("an integer", &x)
	case kFloat:
		var x float64
		return scalar("a number", &x)
	case kBool:
		var x bool
		return scalar("true or false", &x)
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
		seen := map[string]bool{}
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, val := resolve(v.Content[i]), v.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.Value == "<<" {
				return w.at(nodeErr(k, path, "a key must be a plain name, got %s", describe(k)))
			}
			child := joinPath(path, k.Value)
			if seen[k.Value] {
				return w.at(nodeErr(k, child, "duplicate key"))
			}
			seen[k.Value] = true
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

// closest suggests the schema key nearest to key (edit distance ≤ 2).
func closest(key string, schema map[string]field) string {
	names := make([]string, 0, len(schema))
	for k := range schema {
		names = append(names, k)
	}
	return Closest(key, names)
}

// Closest is the name nearest to key by edit distance, at most 2 edits
// away (ties to the first in sorted order), or "": the "did you mean" of
// every strict YAML decoder of the suite.
func Closest(key string, names []string) string {
	names = slices.Sorted(slices.Values(names))
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(key, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
