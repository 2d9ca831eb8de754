package tracev2

import "math"

// The lexical pieces of the SimResult scanner (simresult_scan.go): each
// validates exactly the JSON grammar and reports scanMore when the window
// ends inside a token.

// errReader gives the read error the scanner met, after the bytes before it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// scanString finds the end of the JSON string at b[i] == '"', validating
// escapes and rejecting control characters as the JSON grammar does. plain
// means pure ASCII with no escape. It returns the index after the closing
// quote.
func scanString(b []byte, i int) (int, bool, scanStatus) {
	plain := true
	for j := i + 1; j < len(b); j++ {
		c := b[j]
		switch {
		case c == '"':
			return j + 1, plain, scanOK
		case c < 0x20:
			return j, false, scanOdd
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			if j+1 >= len(b) {
				return j, false, scanMore
			}
			j++
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return j, false, scanMore
				}
				for _, h := range b[j+1 : j+5] {
					if !isHex(h) {
						return j, false, scanOdd
					}
				}
				j += 4
			default:
				return j, false, scanOdd
			}
		}
	}
	return len(b), false, scanMore
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number validates the JSON number at b[i] and returns its end; isInt when
// it has neither fraction nor exponent. A number that runs to the end of the
// window may go on: scanMore.
func number(b []byte, i int) (int, bool, scanStatus) {
	j := i
	if b[j] == '-' {
		j++
		if j == len(b) {
			return j, false, scanMore
		}
	}
	switch c := b[j]; {
	case c == '0':
		j++
	case '1' <= c && c <= '9':
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
	default:
		return j, false, scanOdd
	}
	isInt := true
	if j < len(b) && b[j] == '.' {
		isInt = false
		j++
		d := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == len(b) {
			return j, false, scanMore
		}
		if j == d {
			return j, false, scanOdd
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		isInt = false
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		d := j
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		if j == len(b) {
			return j, false, scanMore
		}
		if j == d {
			return j, false, scanOdd
		}
	}
	if j == len(b) {
		return j, false, scanMore
	}
	return j, isInt, scanOK
}

// jsonInt parses a validated JSON integer literal; false on int64 overflow.
func jsonInt(b []byte) (int64, bool) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	var u uint64
	for _, c := range b {
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

// literal matches true, false or null at b[i].
func literal(b []byte, i int, want string) (int, scanStatus) {
	for k := 0; k < len(want); k++ {
		if i+k == len(b) {
			return i + k, scanMore
		}
		if b[i+k] != want[k] {
			return i + k, scanOdd
		}
	}
	return i + len(want), scanOK
}

// skipValue validates and skips any JSON value at b[i] (an unknown field).
func skipValue(b []byte, i, depth int) (int, scanStatus) {
	switch c := b[i]; {
	case c == '"':
		j, _, st := scanString(b, i)
		return j, st
	case c == '-' || ('0' <= c && c <= '9'):
		j, _, st := number(b, i)
		return j, st
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	case c == '{' || c == '[':
		if depth >= simMaxDepth {
			return i, scanOdd
		}
		return skipComposite(b, i, depth+1)
	}
	return i, scanOdd
}

// skipComposite skips the object or array at b[i].
func skipComposite(b []byte, i, depth int) (int, scanStatus) {
	closer := byte(']')
	if b[i] == '{' {
		closer = '}'
	}
	i = skipWS(b, i+1)
	if i == len(b) {
		return i, scanMore
	}
	if b[i] == closer {
		return i + 1, scanOK
	}
	for {
		var st scanStatus
		if closer == '}' {
			if b[i] != '"' {
				return i, scanOdd
			}
			if i, _, st = scanString(b, i); st != scanOK {
				return i, st
			}
			i = skipWS(b, i)
			if i == len(b) {
				return i, scanMore
			}
			if b[i] != ':' {
				return i, scanOdd
			}
			i = skipWS(b, i+1)
			if i == len(b) {
				return i, scanMore
			}
		}
		if i, st = skipValue(b, i, depth); st != scanOK {
			return i, st
		}
		i = skipWS(b, i)
		if i == len(b) {
			return i, scanMore
		}
		switch b[i] {
		case ',':
			i = skipWS(b, i+1)
			if i == len(b) {
				return i, scanMore
			}
		case closer:
			return i + 1, scanOK
		default:
			return i, scanOdd
		}
	}
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// exactFloat converts a validated JSON number when Clinger's fast path
// applies: a mantissa of at most 2^53 and a power of ten of at most 22 in
// magnitude are both exact in float64, so one multiplication or division
// rounds correctly, as strconv.ParseFloat would. ok is false otherwise.
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
