package tracev2

import (
	"strconv"
	"testing"
)

func TestParseFloatMatchesStrconv(t *testing.T) {
	for _, s := range []string{"0", "1", "0.5", "0.25", "0.01", "0.1", "0.3", "0.123456789012345", "1.000000000000000",
		"0.9999999999999999", "5", "12.5", ".5", "5.", "1e-3", "-0", "+0.5", "NaN", "0x1p-2", "1_0", "", "0.00000000000000001"} {
		want, werr := strconv.ParseFloat(s, 64)
		got, fail := parseFloat([]byte(s))
		if (werr == nil) != (fail == parseOK) || (werr == nil && got != want && !(got != got && want != want)) {
			t.Errorf("parseFloat(%q) = %v, %v; strconv gives %v, %v", s, got, fail, want, werr)
		}
	}
}

func TestParseInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "+7", "42", "-9223372036854775808", "9223372036854775807", "9223372036854775808",
		"-9223372036854775809", "99999999999999999999999", "1x", "", "-", "+", " 1", "1_000", "0x10", "18446744073709551615"} {
		want, werr := strconv.ParseInt(s, 10, 64)
		got, fail := parseInt([]byte(s))
		ok := fail == parseOK
		if (werr == nil) != ok || (ok && got != want) {
			t.Errorf("parseInt(%q) = %v, %v; strconv gives %v, %v", s, got, fail, want, werr)
		}
		if ne, isNE := werr.(*strconv.NumError); isNE && ne.Err == strconv.ErrRange && fail != parseRange {
			t.Errorf("parseInt(%q): fail %v, want parseRange", s, fail)
		}
	}
}
