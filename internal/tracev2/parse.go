package tracev2

import (
	"math"
	"strconv"
)

// Field parsers work on the reader's byte slices without converting them to
// strings, so a row costs no allocation for its numbers.

type parseFail uint8

const (
	parseOK parseFail = iota
	parseEmpty
	parseSyntax
	parseRange
)

// parseInt parses a base-10 int64 with an optional sign, as strconv.ParseInt
// (base 10) does: no spaces, no underscores, no prefixes.
func parseInt(b []byte) (int64, parseFail) {
	if len(b) == 0 {
		return 0, parseEmpty
	}
	neg := false
	switch b[0] {
	case '-':
		neg = true
		b = b[1:]
	case '+':
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, parseSyntax
	}
	var u uint64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, parseSyntax
		}
		if u > (math.MaxUint64-9)/10 {
			// Keep scanning so that "12x" with many digits is a syntax error.
			for _, c2 := range b {
				if c2-'0' > 9 {
					return 0, parseSyntax
				}
			}
			return 0, parseRange
		}
		u = u*10 + uint64(d)
	}
	if neg {
		if u > 1<<63 {
			return 0, parseRange
		}
		return -int64(u), parseOK
	}
	if u > math.MaxInt64 {
		return 0, parseRange
	}
	return int64(u), parseOK
}

// parseBool accepts strconv.ParseBool's set: 1 t T TRUE true True and the
// matching false spellings.
func parseBool(b []byte) (bool, parseFail) {
	switch string(b) {
	case "true", "1", "t", "T", "TRUE", "True":
		return true, parseOK
	case "false", "0", "f", "F", "FALSE", "False":
		return false, parseOK
	case "":
		return false, parseEmpty
	}
	return false, parseSyntax
}

// parseFloat parses a float64; the common "0" is answered without strconv.
func parseFloat(b []byte) (float64, parseFail) {
	switch len(b) {
	case 0:
		return 0, parseEmpty
	case 1:
		if b[0] == '0' {
			return 0, parseOK
		}
		if b[0] == '1' {
			return 1, parseOK
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, parseRange
		}
		return 0, parseSyntax
	}
	return f, parseOK
}

// internTable gives each distinct short string one allocation per reader: a
// per-column memory of the last value (rows often repeat it) backed by a map
// with a per-column insertion budget, so a column of unique values (UUIDs,
// free text) cannot fill it.
type internTable struct {
	last   [numCols]string
	budget [numCols]int
	m      map[string]string
}

const (
	internBudget = 512 // distinct strings remembered per column
	internMaxLen = 96  // longer strings are not interned
)

func newInternTable() *internTable {
	t := &internTable{m: make(map[string]string, 64)}
	for i := range t.budget {
		t.budget[i] = internBudget
	}
	// UUIDs never repeat: do not spend map entries on them.
	t.budget[colXRequestID] = 0
	return t
}

// lookup returns an existing string equal to b, or "" and false. It never
// allocates.
func (t *internTable) lookup(c colID, b []byte) (string, bool) {
	if s := t.last[c]; len(s) == len(b) && s == string(b) {
		return s, true
	}
	if len(b) > internMaxLen {
		return "", false
	}
	if s, ok := t.m[string(b)]; ok {
		t.last[c] = s
		return s, true
	}
	return "", false
}

// add remembers s if the column's budget allows and reports whether it did.
func (t *internTable) add(c colID, b []byte) (string, bool) {
	if t.budget[c] <= 0 || len(b) > internMaxLen {
		return "", false
	}
	t.budget[c]--
	s := string(b)
	t.m[s] = s
	t.last[c] = s
	return s, true
}
