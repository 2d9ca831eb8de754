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
	max   int // nesting allowed
}

// New returns a scanner at the start of b.
func New(b []byte) Scanner { return Scanner{b: b, max: MaxDepth} }

// NewMaxDepth returns a scanner at the start of b that allows nesting up
// to maxDepth levels (instead of MaxDepth), for a document another decoder has
// already accepted with its own limit.
func NewMaxDepth(b []byte, maxDepth int) Scanner { return Scanner{b: b, max: maxDepth} }

// Fail is an error at the scanner's position.
func (s *Scanner) Fail(msg string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", s.i, msg)
}

// WS skips white space.
func (s *Scanner) WS() { s.i = Space(s.b, s.i) }

// Peek returns the next non-space byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.WS()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

// Offset is the index in the document of the next byte to read.
func (s *Scanner) Offset() int { return s.i }

// End checks that only white space is left.
func (s *Scanner) End() error {
	s.WS()
	if s.i != len(s.b) {
		return s.Fail("data after the value")
	}
	return nil
}

// fail is the error of a lexical step that stopped at index at.
func (s *Scanner) fail(at int, st Status) error {
	s.i = at
	if st&^More == tooDeep {
		return fmt.Errorf("invalid JSON at byte %d: %w", s.i, ErrDepth)
	}
	return s.Fail(st.Why())
}

// Str reads a string and returns its raw bytes between the quotes.
func (s *Scanner) Str() ([]byte, error) {
	if s.Peek() != '"' {
		return nil, s.Fail("expected a string")
	}
	end, _, st := String(s.b, s.i)
	if st != OK {
		return nil, s.fail(end, st)
	}
	raw := s.b[s.i+1 : end-1]
	s.i = end
	return raw, nil
}

// Lit consumes a literal (true, false, null).
func (s *Scanner) Lit(word string) error {
	end, st := Literal(s.b, s.i, word)
	if st != OK {
		return s.fail(end, st)
	}
	s.i = end
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
	end, _, st := Number(s.b, s.i)
	if st.Bad() {
		return nil, s.fail(end, st)
	}
	raw := s.b[s.i:end]
	s.i = end
	return raw, nil
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

// Skip consumes any value, validating it.
func (s *Scanner) Skip() error {
	s.WS()
	end, st := Value(s.b, s.i, s.max-s.depth)
	if st.Bad() {
		return s.fail(end, st)
	}
	s.i = end
	return nil
}

// Object iterates the members of an object; field must consume the value.
// Keys with escapes are unescaped (rare; that path allocates).
func (s *Scanner) Object(field func(key []byte) error) error {
	if s.Peek() != '{' {
		return s.Fail("expected an object")
	}
	if s.depth++; s.depth > s.max {
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
	if s.depth++; s.depth > s.max {
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
