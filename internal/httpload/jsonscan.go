package httpload

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// maxJSONDepth bounds nesting so a hostile body cannot exhaust the stack.
const maxJSONDepth = 64

// errJSONDepth reports nesting beyond maxJSONDepth.
var errJSONDepth = errors.New("nested too deeply")

// jscan is a small validating JSON scanner over one document. It reads only
// what the caller asks for and skips (while validating) the rest, without
// allocating; it never unescapes values, because the client only needs to
// know whether a string is empty, and finish reasons are plain ASCII.
type jscan struct {
	b     []byte
	i     int
	depth int
}

func (s *jscan) fail(msg string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", s.i, msg)
}

func (s *jscan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *jscan) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// end checks that only white space is left.
func (s *jscan) end() error {
	s.ws()
	if s.i != len(s.b) {
		return s.fail("data after the value")
	}
	return nil
}

// str reads a string and returns its raw bytes between the quotes.
func (s *jscan) str() ([]byte, error) {
	if s.peek() != '"' {
		return nil, s.fail("expected a string")
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
				return nil, s.fail("unterminated escape")
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) || !isHex4(s.b[s.i+2:s.i+6]) {
					return nil, s.fail("bad \\u escape")
				}
				s.i += 6
			default:
				return nil, s.fail("bad escape")
			}
		case c < 0x20:
			return nil, s.fail("control character in string")
		default:
			s.i++
		}
	}
	return nil, s.fail("unterminated string")
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// lit consumes a literal (true, false, null).
func (s *jscan) lit(word string) error {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return s.fail("invalid literal")
	}
	s.i += len(word)
	return nil
}

// null consumes a null if one is next.
func (s *jscan) null() bool {
	if s.peek() == 'n' && s.lit("null") == nil {
		return true
	}
	return false
}

// num reads a number per the JSON grammar and returns its raw bytes.
func (s *jscan) num() ([]byte, error) {
	s.ws()
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
		return nil, s.fail("invalid number")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return nil, s.fail("invalid number")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return nil, s.fail("invalid number")
		}
	}
	return s.b[start:s.i], nil
}

func (s *jscan) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// count reads a token count: an integer, or null (0). Fractions are
// truncated; negative or huge values are errors.
func (s *jscan) count() (int, error) {
	if s.null() {
		return 0, nil
	}
	raw, err := s.num()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range raw {
		if c < '0' || c > '9' {
			f, ferr := strconv.ParseFloat(string(raw), 64)
			if ferr != nil || f < 0 || f > 1e15 {
				return 0, s.fail("token count out of range")
			}
			return int(f), nil
		}
		if n > 1e15 {
			return 0, s.fail("token count out of range")
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// skip consumes any value, validating it.
func (s *jscan) skip() error {
	switch s.peek() {
	case '{':
		return s.object(func([]byte) error { return s.skip() })
	case '[':
		return s.array(func() error { return s.skip() })
	case '"':
		_, err := s.str()
		return err
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	case 0:
		return s.fail("unexpected end")
	default:
		_, err := s.num()
		return err
	}
}

// object iterates the members of an object; field must consume the value.
// Keys with escapes are unescaped (rare; that path allocates).
func (s *jscan) object(field func(key []byte) error) error {
	if s.peek() != '{' {
		return s.fail("expected an object")
	}
	if s.depth++; s.depth > maxJSONDepth {
		return fmt.Errorf("invalid JSON at byte %d: %w", s.i, errJSONDepth)
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		s.depth--
		return nil
	}
	for {
		key, err := s.str()
		if err != nil {
			return err
		}
		if hasBackslash(key) {
			key = unescapeKey(key)
		}
		if s.peek() != ':' {
			return s.fail("expected ':'")
		}
		s.i++
		if err := field(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("expected ',' or '}'")
		}
	}
}

// array iterates the elements of an array; elem must consume each.
func (s *jscan) array(elem func() error) error {
	if s.peek() != '[' {
		return s.fail("expected an array")
	}
	if s.depth++; s.depth > maxJSONDepth {
		return fmt.Errorf("invalid JSON at byte %d: %w", s.i, errJSONDepth)
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		s.depth--
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return nil
		default:
			return s.fail("expected ',' or ']'")
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
