package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"servesim/internal/sweep"
)

// TestSweepBands: a sweep with an interval shades each latency series
// between the low and high ends of its rows (up to the top of the plot
// where a high end is unbounded); one without draws no band.
func TestSweepBands(t *testing.T) {
	d := sweepDoc(t, "ttft.p99<200ms", sweep.FindMaxRate, "n=1")
	var plain bytes.Buffer
	if err := WriteSweepHTML(&plain, d); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), `class="band"`) {
		t.Errorf("a sweep without an interval has bands")
	}
	d.Interval = &sweep.Interval{Model: true, Seeds: 1}
	scale := func(l *sweep.Latency, f float64) *sweep.Latency {
		if l == nil {
			return nil
		}
		return &sweep.Latency{Mean: l.Mean * f, P50: l.P50 * f, P90: l.P90 * f, P95: l.P95 * f, P99: l.P99 * f}
	}
	for i := range d.Rows {
		r := &d.Rows[i]
		if r.Role == sweep.RoleProbe {
			continue
		}
		r.Band = &sweep.Band{Runs: 3, TTFTLo: scale(r.TTFT, 0.8), TTFTHi: scale(r.TTFT, 1.25), ITLLo: scale(r.ITL, 0.9), E2ELo: scale(r.E2E, 0.8), E2EHi: scale(r.E2E, 1.2)}
	}
	var b bytes.Buffer
	if err := WriteSweepHTML(&b, d); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	// One curve: p50, p90 and p99 of TTFT, ITL and E2E, each banded.
	bands := regexp.MustCompile(`<polygon class="band" fill="[^"]+" fill-opacity="0.15" stroke="none" points="([^"]+)"><title>(p50|p90|p99): 90% interval</title></polygon>`).FindAllStringSubmatch(page, -1)
	if len(bands) != 9 {
		t.Fatalf("%d bands, want 9 (3 statistics × TTFT, ITL, E2E)", len(bands))
	}
	for _, m := range bands {
		if n := len(strings.Fields(m[1])); n%2 != 0 || n < 4 {
			t.Errorf("a band of %d points: %s", n, m[1])
		}
	}
}
