package calibrate

import (
	"fmt"
	"strings"
	"testing"
)

// TestSimLocations: each SimResult is named by the line and byte column of
// its first byte, in an array or JSON Lines, past a byte-order mark and
// nesting deeper than jsonscan's default (the reader accepted it); a
// malformed input stops at the last value read.
func TestSimLocations(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"[{\"a\":1}, {\"b\":2}]", "[s:1:2 s:1:11]"},
		{"{\"a\":1}\n{\"b\":\"é\"} {}\n", "[s:1:1 s:2:1 s:2:12]"},
		{" [\n {},\n\t{} ] ", "[s:2:2 s:3:2]"},
		{"\xef\xbb\xbf[{}]", "[s:1:2]"},
		{"[" + strings.Repeat("[", 100) + strings.Repeat("]", 100) + ", {}]", "[s:1:2 s:1:204]"},
		{"[{}, x]", "[s:1:2]"},
		{"{}\x00{}", "[s:1:1]"},
	} {
		if got := fmt.Sprint(simLocations([]byte(tc.data), "s")); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.data, got, tc.want)
		}
	}
}
