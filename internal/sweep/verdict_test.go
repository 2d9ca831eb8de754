package sweep

import (
	"testing"

	"servesim/internal/steady"
)

// TestJudge: a run stopped early, then one without a steady state, is
// unstable; one in which nothing completed is ok without latencies; only
// the rest is measured.
func TestJudge(t *testing.T) {
	const unsteady = "no steady state: %.1f%%"
	for _, tc := range []struct {
		stopped   string
		steady    steady.Verdict
		completed int64
		status    string
		reason    string
		measured  bool
	}{
		{"over-saturated", steady.Verdict{Steady: true, Growth: 0.5}, 10, StatusUnstable, "over-saturated", false},
		{"", steady.Verdict{Steady: false, Growth: 0.263}, 10, StatusUnstable, "no steady state: 26.3%", false},
		{"", steady.Verdict{Steady: true}, 0, StatusOK, "no request completed", false},
		{"", steady.Verdict{Steady: true, Growth: 0.01}, 3, StatusOK, "", true},
	} {
		var r Row
		measured := Judge(&r, tc.stopped, tc.steady, tc.completed, unsteady)
		if r.Status != tc.status || r.Reason != tc.reason || measured != tc.measured || r.QueueGrowth != tc.steady.Growth {
			t.Errorf("%+v: got %s %q measured %v growth %v; want %s %q measured %v", tc, r.Status, r.Reason, measured,
				r.QueueGrowth, tc.status, tc.reason, tc.measured)
		}
	}
}
