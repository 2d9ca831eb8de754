package importer

import (
	"math"
	"strconv"
	"strings"

	"servesim/internal/tracev2"
)

// maxCount bounds token counts as every trace reader does (tracev2.MaxTokens).
const maxCount = tracev2.MaxTokens

// probTooMany spells maxCount out; the two declarations after it fail to
// compile if tracev2.MaxTokens changes without it.
const probTooMany = "exceeds 16777216, the largest token count a trace may hold"

const (
	_ = uint(maxCount - 16777216)
	_ = uint(16777216 - maxCount)
)

// maxSeconds bounds times in seconds so that their µs value fits in int64
// with a wide margin (about 285 000 years).
const maxSeconds = 9e12

// Problems returned by the parsers; an error message is `<value> <problem>`.
const (
	probNotInt    = "is not an integer"
	probNotWhole  = "is not a whole number"
	probNegative  = "is negative"
	probRange     = "is out of range"
	probNotNumber = "is not a number"
	probNotFinite = "is not a finite number"
	// probEpoch: TraceV2 readers take a time of 10^15 µs or more (about 31.7
	// years) for a Unix-epoch instant, so an offset must stay below it.
	probEpoch = "reaches 10^15 µs (31.7 years), which TraceV2 reads as a Unix-epoch time"
)

// parseCount parses a non-negative token count. With allowDecimal, a decimal
// or exponent form of a whole number ("12.0", "1e3") is accepted, as pandas
// and JSON writers produce them; a fraction is then "not a whole number".
// It returns the problem, or "" when text is valid.
func parseCount(text string, allowDecimal bool) (int, string) {
	n, err := strconv.ParseInt(text, 10, 64)
	if err == nil {
		switch {
		case n < 0:
			return 0, probNegative
		case n > maxCount:
			return 0, probTooMany
		}
		return int(n), ""
	}
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		if strings.HasPrefix(text, "-") {
			return 0, probNegative
		}
		return 0, probTooMany
	}
	if !allowDecimal {
		return 0, probNotInt
	}
	f, ferr := strconv.ParseFloat(text, 64)
	switch {
	case ferr != nil && !isRangeErr(ferr):
		return 0, probNotInt
	case math.IsNaN(f), math.IsInf(f, 0) && ferr == nil:
		return 0, probNotInt
	case f < 0:
		return 0, probNegative
	case f > maxCount:
		return 0, probTooMany
	case f != math.Trunc(f):
		return 0, probNotWhole
	}
	return int(f), ""
}

// parseInt64 parses any integer (hash ids); decimals of whole numbers are
// accepted as in parseCount.
func parseInt64(text string) (int64, string) {
	n, err := strconv.ParseInt(text, 10, 64)
	if err == nil {
		return n, ""
	}
	if isRangeErr(err) {
		return 0, probRange
	}
	f, ferr := strconv.ParseFloat(text, 64)
	switch {
	case ferr != nil && isRangeErr(ferr):
		return 0, probRange
	case ferr != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return 0, probNotInt
	case f != math.Trunc(f):
		return 0, probNotWhole
	case f >= math.MaxInt64 || f < math.MinInt64:
		return 0, probRange
	}
	return int64(f), ""
}

// parseDuration parses a non-negative finite number of a unit and returns it
// in µs, rounded to the nearest µs; the result stays below 10^15 µs (see
// probEpoch). usPerUnit is 1e6 for seconds, 1e3 for ms.
func parseDuration(text string, usPerUnit float64) (int64, string) {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		// Exact integer path: no float rounding for whole units.
		if n < 0 {
			return 0, probNegative
		}
		if float64(n) > maxSeconds*1e6/usPerUnit {
			return 0, probRange
		}
		if us := n * int64(usPerUnit); !tracev2.IsEpoch(us) {
			return us, ""
		}
		return 0, probEpoch
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !isRangeErr(err) {
		return 0, probNotNumber
	}
	return durationUs(f, usPerUnit)
}

// durationUs converts a float number of units to µs with the checks of
// parseDuration.
func durationUs(f, usPerUnit float64) (int64, string) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, probNotFinite
	case f < 0:
		return 0, probNegative
	case f*usPerUnit > maxSeconds*1e6:
		return 0, probRange
	}
	us := int64(math.Round(f * usPerUnit))
	if tracev2.IsEpoch(us) {
		return 0, probEpoch
	}
	return us, ""
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
