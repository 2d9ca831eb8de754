package report

import (
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

// TestCoveragePhase: a request that reached a busy engine is covered over
// the central 90% of the step in flight, from its value less its own wait
// (+5% of the step) to that plus 95% of the step; one that found the
// engine idle only by its three values.
func TestCoveragePhase(t *testing.T) {
	// Real TTFTs (first chunk − send) of four requests, in µs.
	trace := []tracev2.Record{
		okRec(1, 0, 12_000, 50_000, 100, 10), // inside the phase span of its interval
		okRec(2, 0, 17_000, 50_000, 100, 10), // inside, below 10,000 − 2,000 + 0.95·10,000 = 17,500
		okRec(3, 0, 18_000, 50_000, 100, 10), // above 17,500
		okRec(4, 0, 12_000, 50_000, 100, 10), // idle engine: interval [9,000, 11,000], above
	}
	phased := func(id int64, ttft float64) tracev2.SimResult {
		s := simOf(id, ttft, 50_000, 100, 10)
		s.WaitInFlightUs, s.StepInFlightUs = 2_000, 10_000
		return s
	}
	mid := []tracev2.SimResult{phased(1, 10_000), phased(2, 10_000), phased(3, 10_000), simOf(4, 10_000, 50_000, 100, 10)}
	lo := []tracev2.SimResult{phased(1, 9_000), phased(2, 9_000), phased(3, 9_000), simOf(4, 9_000, 50_000, 100, 10)}
	hi := []tracev2.SimResult{phased(1, 10_000), phased(2, 10_000), phased(3, 10_000), simOf(4, 11_000, 50_000, 100, 10)}
	r := build(t, Input{Trace: trace, Sim: mid, SimLo: lo, SimHi: hi}, nil)
	mc := r.Coverage.Metrics[MetricTTFT]
	// Spans of the phased requests: [9,000 − 2,000 + 500, 10,000 − 2,000 + 9,500] = [7,500, 17,500].
	if mc.Inside != 2 || mc.Above != 2 || mc.Below != 0 || mc.Phased != 3 || mc.Requests != 4 {
		t.Errorf("ttft coverage %+v; want 2 inside (requests 1, 2), 2 above (3 beyond 17,500 µs, 4 beyond its idle 11,000 µs), 3 phased", mc)
	}
	if mc.Share != 0.5 {
		t.Errorf("share %v, want 0.5", mc.Share)
	}
	if want := "ttft 50.0% of 4 requests (0 below, 2 above, 3 over their arrival's phase; "; !strings.Contains(r.coverageText(), want) {
		t.Errorf("text %q, want it to hold %q", r.coverageText(), want)
	}
}
