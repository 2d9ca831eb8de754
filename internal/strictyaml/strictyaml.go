package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"servesim/internal/suggest"
)

// Error is one located mistake in a YAML input.
type Error struct {
	File   string
	Line   int    // 1-based; 0 = unknown
	Column int    // 1-based; 0 = unknown
	Path   string // the key or element the mistake is in ("clients[1].arrival"); "" = the document
	Msg    string
}

// Error reads "File:Line:Column: Path: Msg", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
			if e.Column > 0 {
				fmt.Fprintf(&b, ":%d", e.Column)
			}
		}
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ExitCode is 2: invalid input.
func (e *Error) ExitCode() int { return 2 }

// At is an error located at node n of file (n may be nil: the file alone).
func At(file string, n *yaml.Node, path, format string, args ...any) *Error {
	e := &Error{File: file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// Parse reads data as one YAML document and returns its top node, nil when
// the document is empty (nothing, or only comments). Anchors and aliases
// are resolved by yaml.v3 when decoding; a second document is an error.
func Parse(file string, data []byte) (n *yaml.Node, err error) {
	defer func() {
		// yaml.v3 is not ours; a panic on some input must still be a clean error.
		if r := recover(); r != nil {
			n, err = nil, &Error{File: file, Msg: fmt.Sprintf("yaml syntax: decoder failure: %v", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &Error{File: file, Line: extra.Line, Column: extra.Column, Msg: "more than one YAML document"}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// lineRE finds the "line N: " yaml.v3 starts its messages with.
var lineRE = regexp.MustCompile(`^line (\d+): `)

// syntaxError turns yaml.v3's "yaml: line 3: mapping values are not
// allowed in this context" into "file:3: yaml syntax: mapping values ...".
func syntaxError(file string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: file}
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	e.Msg = "yaml syntax: " + msg
	return e
}

// Describe names what a node holds, for "want X, got Y": "a mapping",
// "a list", or the scalar quoted.
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	case yaml.AliasNode:
		if n.Alias != nil {
			return Describe(n.Alias)
		}
	}
	return "nothing"
}

// WantMapping is nil when n is a mapping, else the error "want a mapping
// of WHAT, got a list" (what may be "").
func WantMapping(file string, n *yaml.Node, path, what string) *Error {
	if n.Kind == yaml.MappingNode {
		return nil
	}
	want := "a mapping"
	if what != "" {
		want += " of " + what
	}
	return At(file, n, path, "want %s, got %s", want, Describe(n))
}

// UnknownKey is the error for key k, which is none of known: with the
// nearest known name when one is near enough (suggest.Closest).
func UnknownKey(file string, k *yaml.Node, path string, known []string) *Error {
	msg := fmt.Sprintf("unknown key %q", k.Value)
	if s := suggest.Closest(k.Value, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return At(file, k, path, "%s", msg)
}

// Keys records the keys of one mapping, to refuse a key given twice.
type Keys map[string]int

// Add notes key k (at its line), or returns the error naming where it was
// first given.
func (s Keys) Add(file string, k *yaml.Node, path string) *Error {
	if first, ok := s[k.Value]; ok {
		return At(file, k, path, "key %q is given twice (first on line %d)", k.Value, first)
	}
	s[k.Value] = k.Line
	return nil
}

// Decode decodes n into v (a pointer) as yaml.v3 does. A value of the
// wrong type is an error at that value under path: `"many" is not an
// integer`. A number with a fraction where an integer goes (2.9), which
// yaml.v3 would truncate, is such an error too.
func Decode(file string, n *yaml.Node, path string, v any) error {
	if f := fraction(n, reflect.TypeOf(v).Elem(), 0); f != nil {
		return At(file, f, path, "%s is not an integer", Describe(f))
	}
	err := n.Decode(v)
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) || len(te.Errors) == 0 {
		return At(file, n, path, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	return typeError(file, n, path, te.Errors[0], reflect.TypeOf(v).Elem())
}

// typeRE parses yaml.v3's "line 3: cannot unmarshal !!str `many` into int"
// (the value is cut to 7 bytes and "..." when longer than 10).
var typeRE = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")

// typeError words one of yaml.v3's type errors, at the node it is about.
func typeError(file string, n *yaml.Node, path, msg string, into reflect.Type) *Error {
	m := typeRE.FindStringSubmatch(msg)
	if m == nil {
		return At(file, n, path, "%s", lineRE.ReplaceAllString(msg, ""))
	}
	line, _ := strconv.Atoi(m[1])
	at := find(n, line, m[3] != "", strings.TrimSuffix(m[3], "..."))
	if at == nil {
		at = n
	}
	want := TypeWord(m[4])
	if m[4] == into.String() {
		want = TypeWordOf(into)
	}
	if at.Kind != yaml.ScalarNode {
		return At(file, at, path, "want %s, got %s", want, Describe(at))
	}
	return At(file, at, path, "%s is not %s", Describe(at), want)
}

// find is the first node under n (n included) on line that a type error is
// about: a scalar whose value starts with prefix, or, when the error quotes
// no value (scalar false), a list or mapping. nil when there is none.
func find(n *yaml.Node, line int, scalar bool, prefix string) *yaml.Node {
	if n.Line == line {
		if scalar && n.Kind == yaml.ScalarNode && strings.HasPrefix(n.Value, prefix) {
			return n
		}
		if !scalar && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) {
			return n
		}
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			continue // a key: the error is about a value
		}
		if f := find(c, line, scalar, prefix); f != nil {
			return f
		}
	}
	return nil
}

// TypeWord names a Go type, as yaml.v3 prints it, for a user.
func TypeWord(goType string) string {
	switch {
	case goType == "time.Duration":
		return "a duration (e.g. 50ms)"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map"):
		return "a mapping"
	}
	return "a " + goType
}

// TypeWordOf is TypeWord of a Go type (pointers name what they point to).
func TypeWordOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(time.Duration(0)) {
		return TypeWord("time.Duration")
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return TypeWord(t.Kind().String())
}

// Encode writes v as YAML indented by indent spaces: the one way the suite
// writes YAML whose indentation it fixes (trace headers, fitted
// deployments).
func Encode(v any, indent int) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
