// Package jsonscan is a small validating JSON scanner over one document,
// for the hot paths that read a few fields of many small documents (a
// streamed response's chunks, a trace's lines) without decoding them into
// maps or structs. It reads what the caller asks for and skips, while
// validating, the rest, without allocating; it never unescapes values
// (only keys with escapes, rare). It is a leaf: it knows no other package
// of the module.
package jsonscan

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// MaxDepth bounds nesting so a hostile document cannot exhaust the stack.
const MaxDepth = 64

// ErrDepth reports nesting beyond MaxDepth.
var ErrDepth = errors.New("nested too deeply")

// Scanner reads one JSON document.
type Scanner struct {
	b     []byte
	i     int
	depth int
}

// New returns a scanner at the start of b.
func New(b []byte) Scanner { return Scanner{b: b} }

// Fail is an error at the scanner's position.
func (s *Scanner) Fail(msg string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", s.i, msg)
}

// WS skips white space.
func (s *Scanner) WS() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// Peek returns the next non-space byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.WS()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// End checks that only white space is left.
func (s *Scanner) End() error {
	s.WS()
	if s.i != len(s.b) {
		return s.Fail("data after the value")
	}
	return nil
}

// Str reads a string and returns its raw bytes between the quotes.
func (s *Scanner) Str() ([]byte, error) {
	if s.Peek() != '"' {
		return nil, s.Fail("expected a string")
	}
	s.i++
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			return raw, nil
		case c == '\\':
			if s.i+1 >= len(s.b) {
				return nil, s.Fail("unterminated escape")
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex4(s.b[s.i+2:s.i+6]) {
					return nil, s.Fail("bad \\u escape")
				}
				s.i += 6
			default:
				return nil, s.Fail("bad escape")
			}
		case c < 0x20:
			return nil, s.Fail("control character in string")
		default:
			s.i++
		}
	}
	return nil, s.Fail("unterminated string")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// Lit consumes a literal (true, false, null).
func (s *Scanner) Lit(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.Fail("invalid literal")
	}
	s.i += len(word)
	return nil
}

// Null consumes a null if one is next.
func (s *Scanner) Null() bool {
	if s.Peek() == 'n' && s.Lit("null") == nil {
		return true
	}
	return false
}

// Num reads a number per the JSON grammar and returns its raw bytes.
func (s *Scanner) Num() ([]byte, error) {
	s.WS()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		s.digits()
	default:
		return nil, s.Fail("invalid number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, s.Fail("invalid number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, s.Fail("invalid number")
		}
	}
	return s.b[start:s.i], nil
}

// Int reads a number that is an integer within int64: no fraction, no
// exponent (an error, as a number the grammar refuses is).
func (s *Scanner) Int() (int64, error) {
	s.WS()
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start := s.i
	var n uint64
	for ; s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9'; s.i++ {
		n = n*10 + uint64(s.b[s.i]-'0') // 19 digits and more are checked below
	}
	if s.i-start > 18 {
		n = 0
		for _, c := range s.b[start:s.i] {
			d := uint64(c - '0')
			if n > (math.MaxInt64-d)/10 {
				return 0, s.Fail("integer out of range")
			}
			n = n*10 + d
		}
	}
	switch {
	case s.i == start, s.i-start > 1 && s.b[start] == '0':
		return 0, s.Fail("invalid number")
	case s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E'):
		return 0, s.Fail("not an integer")
	}
	if neg {
		return -int64(n), nil
	}
	return int64(n), nil
}

func (s *Scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// Skip consumes any value, validating it.
func (s *Scanner) Skip() error {
	switch s.Peek() {
	case '{':
		return s.Object(func([]byte) error { return s.Skip() })
	case '[':
		return s.Array(func() error { return s.Skip() })
	case '"':
		_, err := s.Str()
		return err
	case 't':
		return s.Lit("true")
	case 'f':
		return s.Lit("false")
	case 'n':
		return s.Lit("null")
	case 0:
		return s.Fail("unexpected end")
	default:
		_, err := s.Num()
		return err
	}
}

// Object iterates the members of an object; field must consume the value.
// Keys with escapes are unescaped (rare; that path allocates).
func (s *Scanner) Object(field func(key []byte) error) error {
	if s.Peek() != '{' {
		return s.Fail("expected an object")
	}
	if s.depth++; s.depth > MaxDepth {
		return fmt.Errorf("invalid JSON at byte %d: %w", s.i, ErrDepth)
	}
	s.i++
	if s.Peek() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		key, err := s.Str()
		if err != nil {
			return err
		}
		if hasBackslash(key) {
			key = unescapeKey(key)
		}
		if s.Peek() != ':' {
			return s.Fail("expected ':'")
		}
		s.i++
		if err := field(key); err != nil {
			return err
		}
		switch s.Peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return s.Fail("expected ',' or '}'")
		}
	}
}

// Array iterates the elements of an array; elem must consume each.
func (s *Scanner) Array(elem func() error) error {
	if s.Peek() != '[' {
		return s.Fail("expected an array")
	}
	if s.depth++; s.depth > MaxDepth {
		return fmt.Errorf("invalid JSON at byte %d: %w", s.i, ErrDepth)
	}
	s.i++
	if s.Peek() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.Peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return s.Fail("expected ',' or ']'")
		}
	}
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// unescapeKey decodes a validated raw key with escapes.
func unescapeKey(raw []byte) []byte {
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var k string
	if json.Unmarshal(quoted, &k) != nil {
		return raw
	}
	return []byte(k)
}
