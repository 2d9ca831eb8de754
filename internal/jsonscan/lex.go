package jsonscan

import (
	"math"
	"strconv"
)

// The lexical steps below read one token or value of b from index i and
// return the index after it, or, when the bytes are not JSON there, the
// index of the offending byte with a Status saying why. They work on a
// whole document (Scanner) and on a window of a stream alike: a Status
// with More set means the window ended before the step could decide, so
// a stream reader reads more and steps again, while a whole document
// treats the end of b as the end of the input.

// Status is the verdict of a lexical step: OK, or the reason the input is
// not JSON if it ends where the step stopped, with the More bit set when
// the step reached the end of b (more input could change the verdict).
type Status uint8

// OK and More are the two verdicts a reader acts on; the other values are
// reasons, each worded by Status.Why.
const (
	OK   Status = 0
	More Status = 0x80
)

const (
	expectedString Status = iota + 1
	expectedColon
	expectedCommaBrace
	expectedCommaBracket
	unexpectedEnd
	invalidNumber
	invalidLiteral
	unterminatedString
	unterminatedEscape
	badEscape
	badUnicodeEscape
	controlChar
	tooDeep
)

// Why words the reason of a Status ("" when the input may end there).
func (st Status) Why() string {
	switch st &^ More {
	case expectedString:
		return "expected a string"
	case expectedColon:
		return "expected ':'"
	case expectedCommaBrace:
		return "expected ',' or '}'"
	case expectedCommaBracket:
		return "expected ',' or ']'"
	case unexpectedEnd:
		return "unexpected end"
	case invalidNumber:
		return "invalid number"
	case invalidLiteral:
		return "invalid literal"
	case unterminatedString:
		return "unterminated string"
	case unterminatedEscape:
		return "unterminated escape"
	case badEscape:
		return "bad escape"
	case badUnicodeEscape:
		return "bad \\u escape"
	case controlChar:
		return "control character in string"
	case tooDeep:
		return ErrDepth.Error()
	}
	return ""
}

// Bad reports whether the input is not JSON if it ends where the step
// stopped.
func (st Status) Bad() bool { return st&^More != 0 }

// Space returns the index of the first byte at or after i that is not JSON
// white space (len(b) if none).
func Space(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// String reads the string at b[i] == '"', validating escapes and refusing
// control characters as the JSON grammar does; it does not unescape. plain
// means pure ASCII without escapes. On a bad escape the error is at its
// backslash.
func String(b []byte, i int) (end int, plain bool, st Status) {
	plain = true
	for j := i + 1; j < len(b); j++ {
		c := b[j]
		switch {
		case c == '"':
			return j + 1, plain, OK
		case c < 0x20:
			return j, false, controlChar
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			if j+1 >= len(b) {
				return j, false, unterminatedEscape | More
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(b) {
					return j, false, badUnicodeEscape | More
				}
				for _, h := range b[j+2 : j+6] {
					if !isHex(h) {
						return j, false, badUnicodeEscape
					}
				}
				j += 5
			default:
				return j, false, badEscape
			}
		}
	}
	return len(b), false, unterminatedString | More
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// Number reads the number at b[i]; isInt when it has neither fraction nor
// exponent. A number that reaches the end of b may go on: More is set.
func Number(b []byte, i int) (end int, isInt bool, st Status) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && '1' <= b[j] && b[j] <= '9':
		j = digits(b, j)
	default:
		return j, false, invalidNumber | atEnd(b, j)
	}
	isInt = true
	if j < len(b) && b[j] == '.' {
		isInt = false
		d := j + 1
		if j = digits(b, d); j == d {
			return j, false, invalidNumber | atEnd(b, j)
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		isInt = false
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		d := j
		if j = digits(b, d); j == d {
			return j, false, invalidNumber | atEnd(b, j)
		}
	}
	return j, isInt, atEnd(b, j)
}

// atEnd is More at the end of b.
func atEnd(b []byte, j int) Status {
	if j == len(b) {
		return More
	}
	return OK
}

func digits(b []byte, j int) int {
	for j < len(b) && '0' <= b[j] && b[j] <= '9' {
		j++
	}
	return j
}

// Literal reads word (true, false or null) at b[i]. The error is at i.
func Literal(b []byte, i int, word string) (end int, st Status) {
	for k := 0; k < len(word); k++ {
		if i+k == len(b) {
			return i, invalidLiteral | More
		}
		if b[i+k] != word[k] {
			return i, invalidLiteral
		}
	}
	return i + len(word), OK
}

// Value reads, validating, any value at b[i]; levels is how many arrays
// or objects may still open (MaxDepth at the top), so that a hostile
// document cannot exhaust the stack.
func Value(b []byte, i, levels int) (end int, st Status) {
	if i == len(b) {
		return i, unexpectedEnd | More
	}
	switch b[i] {
	case '"':
		end, _, st = String(b, i)
		return end, st
	case 't':
		return Literal(b, i, "true")
	case 'f':
		return Literal(b, i, "false")
	case 'n':
		return Literal(b, i, "null")
	case '{', '[':
		if levels <= 0 {
			return i, tooDeep
		}
		return composite(b, i, levels-1)
	case 0:
		return i, unexpectedEnd
	}
	end, _, st = Number(b, i)
	return end, st
}

// composite reads the object or array at b[i]; levels may open in it.
func composite(b []byte, i, levels int) (int, Status) {
	closer, sep := byte(']'), expectedCommaBracket
	if b[i] == '{' {
		closer, sep = '}', expectedCommaBrace
	}
	i = Space(b, i+1)
	if i < len(b) && b[i] == closer {
		return i + 1, OK
	}
	for {
		var st Status
		if closer == '}' {
			if i == len(b) || b[i] != '"' {
				return i, expectedString | atEnd(b, i)
			}
			if i, _, st = String(b, i); st != OK {
				return i, st
			}
			if i = Space(b, i); i == len(b) || b[i] != ':' {
				return i, expectedColon | atEnd(b, i)
			}
			i = Space(b, i+1)
		}
		if i, st = Value(b, i, levels); st.Bad() {
			return i, st
		}
		switch i = Space(b, i); {
		case i == len(b):
			return i, sep | More
		case b[i] == ',':
			i = Space(b, i+1)
		case b[i] == closer:
			return i + 1, OK
		default:
			return i, sep
		}
	}
}

// ParseInt converts a number Number read as an integer; false beyond
// int64.
func ParseInt(raw []byte) (int64, bool) {
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	var u uint64
	for _, c := range raw {
		if u > (math.MaxUint64-9)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// Float converts a number Number read, as strconv.ParseFloat does (an
// error when it is out of range). Most numbers take Clinger's fast path: a
// mantissa of at most 2^53 and a power of ten of at most 22 in magnitude
// are both exact in float64, so one multiplication or division rounds
// correctly.
func Float(raw []byte) (float64, error) {
	if f, ok := exactFloat(raw); ok {
		return f, nil
	}
	return strconv.ParseFloat(string(raw), 64)
}

// exactFloat is Float's fast path; ok is false where it does not apply.
func exactFloat(b []byte) (float64, bool) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var m uint64
	digits, exp := 0, 0
	k := 0
	for ; k < len(b) && b[k] >= '0' && b[k] <= '9'; k++ {
		m = m*10 + uint64(b[k]-'0')
		digits++
	}
	if k < len(b) && b[k] == '.' {
		for k++; k < len(b) && b[k] >= '0' && b[k] <= '9'; k++ {
			m = m*10 + uint64(b[k]-'0')
			digits++
			exp--
		}
	}
	if digits > 19 { // m may have wrapped
		return 0, false
	}
	if k < len(b) { // exponent
		k++
		eneg := false
		if b[k] == '+' || b[k] == '-' {
			eneg = b[k] == '-'
			k++
		}
		e := 0
		for ; k < len(b); k++ {
			if e > 1000 {
				return 0, false
			}
			e = e*10 + int(b[k]-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if m > 1<<53 || exp < -22 || exp > 22 {
		return 0, false
	}
	f := float64(m)
	if exp < 0 {
		f /= exactPow10(-exp)
	} else {
		f *= exactPow10(exp)
	}
	if neg {
		f = -f
	}
	return f, true
}

// exactPow10 is 10^n for 0 <= n <= 22, the powers exact in float64.
func exactPow10(n int) float64 {
	return [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}[n]
}
