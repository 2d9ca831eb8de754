package clip

import "testing"

func TestText(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"}, // é is two bytes: the cut moves back to its start
		{"abc", 0, "…"},
	} {
		if got := Text(tc.in, tc.limit); got != tc.want {
			t.Errorf("Text(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}
