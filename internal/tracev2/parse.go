package tracev2

import (
	"strconv"

	"servesim/internal/jsonscan"
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
// (base 10) does: no spaces, no underscores, no prefixes. The digits are
// checked here; their value, and whether it fits, is jsonscan's ParseInt.
func parseInt(b []byte) (int64, parseFail) {
	if len(b) == 0 {
		return 0, parseEmpty
	}
	digits := b
	switch b[0] {
	case '-':
		digits = b[1:]
	case '+':
		digits = b[1:]
		b = digits
	}
	if len(digits) == 0 {
		return 0, parseSyntax
	}
	for _, c := range digits {
		if c-'0' > 9 {
			return 0, parseSyntax
		}
	}
	v, ok := jsonscan.ParseInt(b)
	if !ok {
		return 0, parseRange
	}
	return v, parseOK
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

// parseFloat parses a float64. Plain decimals with at most 15 significant
// digits and 15 fraction digits ("0", "0.25", "1") take a fast exact path:
// the digits form an integer m < 2^53 and m / 10^k with k <= 22 is
// correctly rounded, so the result equals strconv.ParseFloat's. Anything
// else goes to strconv.
func parseFloat(b []byte) (float64, parseFail) {
	if len(b) == 0 {
		return 0, parseEmpty
	}
	if len(b) <= 16 {
		var m uint64
		frac, digits, dot := 0, 0, false
		ok := true
		for _, c := range b {
			switch {
			case c >= '0' && c <= '9':
				m = m*10 + uint64(c-'0')
				digits++
				if dot {
					frac++
				}
			case c == '.' && !dot:
				dot = true
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && digits > 0 && digits <= 15 && b[0] != '.' && b[len(b)-1] != '.' {
			return float64(m) / pow10(frac), parseOK
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

// pow10 is 10^k for 0 <= k <= 15, exact in float64.
func pow10(k int) float64 {
	p := 1.0
	for ; k > 0; k-- {
		p *= 10
	}
	return p
}

// internTable gives each distinct short string one allocation per reader.
// Each column keeps its last few distinct values (rows repeat a handful of
// clients, classes and statuses, so a short linear scan answers most
// lookups); behind that a map, filled up to a per-column budget so a column
// of unique values (UUIDs, session ids) cannot grow it without bound, and
// skipped for a column once it stops paying off.
type internTable struct {
	ring   [numCols][internRing]string
	next   [numCols]uint8
	budget [numCols]int
	hits   [numCols]int
	misses [numCols]int
	m      map[string]string
}

const (
	internRing   = 8   // recent values kept per column
	internBudget = 512 // distinct strings the map takes per column
	internMaxLen = 96  // longer strings are not interned
)

func newInternTable() *internTable {
	t := &internTable{m: make(map[string]string, 64)}
	for i := range t.budget {
		t.budget[i] = internBudget
	}
	// UUIDs never repeat: do not spend map entries or lookups on them.
	t.budget[colXRequestID] = 0
	t.misses[colXRequestID] = 1 << 30
	return t
}

// lookup returns an existing string equal to b, or "" and false. It never
// allocates.
func (t *internTable) lookup(c colID, b []byte) (string, bool) {
	ring := &t.ring[c]
	for i := range ring {
		if s := ring[i]; len(s) == len(b) && s == string(b) {
			return s, true
		}
	}
	if len(b) > internMaxLen {
		return "", false
	}
	// The map pays off while it still takes entries or answers at least
	// one lookup in eight.
	if t.budget[c] <= 0 && t.hits[c]*8 < t.misses[c] {
		return "", false
	}
	if s, ok := t.m[string(b)]; ok {
		t.hits[c]++
		t.remember(c, s)
		return s, true
	}
	t.misses[c]++
	return "", false
}

func (t *internTable) remember(c colID, s string) {
	t.ring[c][t.next[c]] = s
	t.next[c] = (t.next[c] + 1) % internRing
}

// add remembers b if the column's budget allows and reports whether it did.
func (t *internTable) add(c colID, b []byte) (string, bool) {
	if t.budget[c] <= 0 || len(b) > internMaxLen {
		return "", false
	}
	t.budget[c]--
	s := string(b)
	t.m[s] = s
	t.remember(c, s)
	return s, true
}
