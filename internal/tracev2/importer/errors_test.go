package importer

import (
	"bytes"
	"strings"
	"testing"
)

func TestLineCol(t *testing.T) {
	long := strings.Repeat("ü", 70000) // longer than lineColAt's read chunk
	tests := []struct {
		text      string
		off       int
		line, col int
	}{
		{"", 0, 1, 1},
		{"abc", 2, 1, 3},
		{"a\nbc", 2, 2, 1},
		{"a\r\nbc", 4, 2, 2},
		{"é\nxéy", 6, 2, 3}, // columns count characters, not bytes
		{"\n\n\nz", 3, 4, 1},
		{long + "x", len(long), 1, 70001},
		{"x\n" + long + "y", 2 + len(long), 2, 70001},
	}
	for _, tt := range tests {
		l, c := lineCol([]byte(tt.text), tt.off)
		l2, c2 := lineColAt(bytes.NewReader([]byte(tt.text)), int64(tt.off))
		if l != tt.line || c != tt.col || l2 != tt.line || c2 != tt.col {
			t.Errorf("%.12q at %d: lineCol = %d:%d, lineColAt = %d:%d, want %d:%d",
				tt.text, tt.off, l, c, l2, c2, tt.line, tt.col)
		}
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{File: "a.csv", Line: 3, Column: 2, Field: "ContextTokens", Msg: `"-3" is negative`},
			`a.csv:3:2: field ContextTokens: "-3" is negative`},
		{&Error{File: "<stdin>", Line: 1, Column: 9, Msg: "json syntax: unexpected end of input"},
			`<stdin>:1:9: json syntax: unexpected end of input`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("got %s, want %s", got, tt.want)
		}
		if tt.err.ExitCode() != 2 {
			t.Errorf("ExitCode() = %d, want 2", tt.err.ExitCode())
		}
	}
	if displayName("-") != "<stdin>" || displayName("") != "<stdin>" || displayName("x") != "x" {
		t.Error("displayName: want <stdin> for \"\" and \"-\"")
	}
}

func TestParseNumbers(t *testing.T) {
	counts := []struct {
		in      string
		decimal bool
		want    int
		prob    string
	}{
		{"0", false, 0, ""}, {"4808", false, 4808, ""}, {"-3", false, 0, probNegative},
		{"1.5", false, 0, probNotInt}, {"12.0", false, 0, probNotInt}, {"12.0", true, 12, ""},
		{"1e3", true, 1000, ""}, {"1.5", true, 0, probNotWhole}, {"-2.0", true, 0, probNegative},
		{"2147483648", false, 0, probTooMany}, {"16777216", false, 16777216, ""}, {"16777217", false, 0, probTooMany},
		{"2e9", true, 0, probTooMany}, {"-99999999999999999999", false, 0, probNegative},
		{"nan", true, 0, probNotInt}, {"inf", true, 0, probNotInt}, {"1e400", true, 0, probTooMany},
		{"", false, 0, probNotInt}, {" 5", false, 0, probNotInt}, {"0x10", true, 0, probNotInt},
	}
	for _, tt := range counts {
		got, prob := parseCount(tt.in, tt.decimal)
		if got != tt.want || prob != tt.prob {
			t.Errorf("parseCount(%q, %v) = %d, %q; want %d, %q", tt.in, tt.decimal, got, prob, tt.want, tt.prob)
		}
	}
	durations := []struct {
		in   string
		unit float64
		want int64
		prob string
	}{
		{"0", 1e6, 0, ""}, {"0.052", 1e6, 52000, ""}, {"199.96150599999999", 1e6, 199961506, ""},
		{"3536999", 1e3, 3536999000, ""}, {"1.5", 1e3, 1500, ""}, {"-1", 1e3, 0, probNegative},
		{"nan", 1e6, 0, probNotFinite}, {"soon", 1e6, 0, probNotNumber}, {"1e13", 1e6, 0, probRange},
		{"999999999", 1e6, 999999999000000, ""}, {"999999999.9999994", 1e6, 999999999999999, ""},
		{"1000000000", 1e6, 0, probEpoch}, {"999999999.9999996", 1e6, 0, probEpoch},
		{"9000000000001", 1e6, 0, probRange}, {"999999999999", 1e3, 999999999999000, ""},
	}
	for _, tt := range durations {
		got, prob := parseDuration(tt.in, tt.unit)
		if got != tt.want || prob != tt.prob {
			t.Errorf("parseDuration(%q, %g) = %d, %q; want %d, %q", tt.in, tt.unit, got, prob, tt.want, tt.prob)
		}
	}
}

// TestErrorIsBounded: whatever a cause says, an import error is one line of
// bounded length.
func TestErrorIsBounded(t *testing.T) {
	e := &Error{File: "t.csv", Line: 2, Column: 1, Field: "x", Msg: strings.Repeat("abc,", 100_000)}
	if got := e.Error(); len(got) > 450 || !strings.HasSuffix(got, "…") {
		t.Errorf("Error() is %d bytes: %.100q", len(got), got)
	}
}
