package report

import (
	"strings"
	"testing"
)

// TestHTMLDurationsForPeople: the page writes durations as a person reads
// them, never Go's syntax or a zero with a unit.
func TestHTMLDurationsForPeople(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"3m3.567455s", "3 min 4 s"}, {"1.84ms", "1.84 ms"}, {"0s", "0"}, {"not a duration", "not a duration"},
	} {
		if got := spanText(c.in); got != c.want {
			t.Errorf("spanText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	r := goldenReport(t)
	r.Run.NetworkRTTUs = 0
	r.TraceInfo.Duration = "3m3.567455s"
	var b strings.Builder
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"<td>network RTT added to sim</td><td>none</td>", `<td class="n">3 min 4 s</td>`} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"3m3.567455s", ">0 us<"} {
		if strings.Contains(page, bad) {
			t.Errorf("page shows %q", bad)
		}
	}
}
