package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"servesim/internal/jsonscan"
)

// docSource is a sweep document being read: its bytes, and where its
// top-level values and its rows start, so that every error names
// file:line:column.
type docSource struct {
	name string
	data []byte
	top  map[string]int // top-level key → offset of its value
	rows []int          // offset of each element of rows

	fields map[reflect.Type]map[string]reflect.Type // jsonFields, by struct type
}

// pos is the line and column of byte offset off.
func (s *docSource) pos(off int) Pos {
	off = min(max(off, 0), len(s.data))
	line := 1 + bytes.Count(s.data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(s.data[:off], '\n')
	return Pos{File: s.name, Line: line, Col: col}
}

// at is an error at byte offset off.
func (s *docSource) at(off int, field, format string, a ...any) *InputError {
	return inputErr(s.pos(off), field, format, a...)
}

// field is an error at the value of a top-level key (the file alone when
// the key is absent).
func (s *docSource) field(key, format string, a ...any) *InputError {
	if off, ok := s.top[key]; ok {
		return s.at(off, key, format, a...)
	}
	return inputErr(Pos{File: s.name}, key, format, a...)
}

// row is an error at element i of rows.
func (s *docSource) row(i int, field, format string, a ...any) *InputError {
	path := fmt.Sprintf("rows[%d]", i)
	if field != "" {
		path += "." + field
	}
	if i < len(s.rows) {
		return s.at(s.rows[i], path, format, a...)
	}
	return inputErr(Pos{File: s.name}, path, format, a...)
}

// DecodeDoc reads a sweep's JSON document (what a sweep writes with
// --format json) as strictly as a trace: one JSON value of the document's
// shape (no unknown or repeated key, every value of its type, nothing
// after it), with values a sweep can write (counts and latencies finite and
// not negative, one row per case, or per case and rate for a max-rate
// search, an SLO that parses, a question it knows). Errors name
// file:line:column; name is the file's name.
func DecodeDoc(name string, data []byte) (*Doc, error) {
	d, _, err := decodeDoc(name, data)
	return d, err
}

// DecodeWholeDoc is DecodeDoc of the document of a whole sweep: a shard's
// document is refused, as its rows are a sweep only once merged.
func DecodeWholeDoc(name string, data []byte) (*Doc, error) {
	d, s, err := decodeDoc(name, data)
	if err == nil && d.Shard != "" {
		return nil, s.field("shard", "%q: the document of one shard of a sweep; merge the shards first (sweep merge --format json)", d.Shard)
	}
	return d, err
}

func decodeDoc(name string, data []byte) (*Doc, *docSource, error) {
	s := &docSource{name: name, data: data, top: map[string]int{}, fields: map[reflect.Type]map[string]reflect.Type{}}
	sc := jsonscan.New(data)
	if sc.Peek() != '{' {
		return nil, nil, s.at(sc.Offset(), "", "not a sweep document: want a JSON object (the JSON a sweep writes with --format json)")
	}
	if err := s.walk(&sc, reflect.TypeOf(Doc{}), ""); err != nil {
		return nil, nil, err
	}
	if sc.Peek() != 0 {
		return nil, nil, s.at(sc.Offset(), "", "data after the document")
	}
	var d Doc
	if err := json.Unmarshal(data, &d); err != nil { // walk checked every value: not expected
		return nil, nil, inputErr(Pos{File: name}, "", "not a sweep document: %v", err)
	}
	if err := s.check(&d); err != nil {
		return nil, nil, err
	}
	return &d, s, nil
}

// walk reads the value at the scanner as Go type t decodes it, refusing
// what encoding/json would refuse or silently drop: unknown and repeated
// keys, values of another type, numbers out of range, null where no
// pointer or list stands. path names the value in errors.
func (s *docSource) walk(sc *jsonscan.Scanner, t reflect.Type, path string) error {
	start := jsonscan.Space(s.data, sc.Offset())
	c := sc.Peek()
	if c == 'n' && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map) {
		return s.lex(sc.Lit("null"))
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := jsonKind(t)
	if got := valueKind(c); got != want && (want != "an integer" || got != "a number") {
		if err := s.lex(sc.Skip()); err != nil {
			return err
		}
		return s.at(start, path, "want %s, got %s", want, got)
	}
	switch t.Kind() {
	case reflect.Struct:
		return s.object(sc, t, path)
	case reflect.Map:
		seen := map[string]bool{}
		return s.lex(sc.Object(func(key []byte) error {
			k := string(key)
			if seen[k] {
				return s.at(bytes.LastIndex(s.data[:sc.Offset()], append([]byte{'"'}, key...)), path, "key %q is given twice", k)
			}
			seen[k] = true
			return s.walk(sc, t.Elem(), path+"."+k)
		}))
	case reflect.Slice:
		i := 0
		return s.lex(sc.Array(func() error {
			if path == "rows" {
				s.rows = append(s.rows, jsonscan.Space(s.data, sc.Offset()))
			}
			err := s.walk(sc, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			i++
			return err
		}))
	case reflect.String:
		_, err := sc.Str()
		return s.lex(err)
	case reflect.Bool:
		return s.lex(sc.Skip())
	}
	raw, err := sc.Num()
	if err != nil {
		return s.lex(err)
	}
	if t.Kind() == reflect.Int || t.Kind() == reflect.Int64 {
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			return s.at(start, path, "%s is not an integer", raw)
		}
		return nil
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err != nil || math.IsInf(f, 0) {
		return s.at(start, path, "%s is out of range", raw)
	}
	return nil
}

// object reads an object as struct type t decodes it.
func (s *docSource) object(sc *jsonscan.Scanner, t reflect.Type, path string) error {
	fields := s.fields[t]
	if fields == nil {
		fields = jsonFields(t)
		s.fields[t] = fields
	}
	seen := map[string]bool{}
	return s.lex(sc.Object(func(key []byte) error {
		k := string(key)
		keyAt := bytes.LastIndex(s.data[:sc.Offset()], append([]byte{'"'}, key...))
		sub := k
		if path != "" {
			sub = path + "." + k
		}
		ft, ok := fields[k]
		switch {
		case !ok:
			return s.at(keyAt, path, "unknown key %q", k)
		case seen[k]:
			return s.at(keyAt, path, "key %q is given twice", k)
		}
		seen[k] = true
		if path == "" {
			s.top[k] = jsonscan.Space(s.data, sc.Offset())
		}
		return s.walk(sc, ft, sub)
	}))
}

// lex words an error of the scanner (malformed JSON) at its byte, and
// passes the errors of walk through.
func (s *docSource) lex(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*InputError); ok {
		return err
	}
	msg := err.Error()
	off := 0
	if rest, ok := strings.CutPrefix(msg, "invalid JSON at byte "); ok {
		num, why, _ := strings.Cut(rest, ": ")
		off, _ = strconv.Atoi(num)
		msg = why
	}
	return s.at(off, "", "not a sweep document: invalid JSON: %s", msg)
}

// jsonFields maps the JSON keys of struct type t to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f.Type
	}
	return out
}

// jsonKind names the JSON value Go type t decodes.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	}
	return "a number"
}

// valueKind names the JSON value that starts with byte c, in jsonKind's
// words (an integer is a number until it is read).
func valueKind(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "a list"
	case c == '"':
		return "a string"
	case c == 't', c == 'f':
		return "true or false"
	case c == 'n':
		return "null"
	case c == '-', c >= '0' && c <= '9':
		return "a number"
	case c == 0:
		return "nothing"
	}
	return fmt.Sprintf("%q", c)
}
