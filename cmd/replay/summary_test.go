package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSummaryJudgesSteadyStateAndSLO: replay's summary carries the
// steady-state test, the same as run's; a saturated trace replayed on its
// deployment is unstable, a light one steady; goodput and attainment come
// only with an SLO (--slo here).
func TestSummaryJudgesSteadyStateAndSLO(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		rate     string
		steady   bool
		wantText string
	}{
		{"5", true, "state      steady"},
		{"80", false, "state      unstable: queue grows by "},
	} {
		prefix := filepath.Join(dir, "r"+tc.rate)
		execRun(t, "--workload", "chatbot", "--rate", tc.rate, "--num-requests", "1000", "--trace-output", prefix)
		metrics := prefix + "-metrics.json"
		r := mustReplay(t, nil, prefix+".csv", "--format", "text", "--metrics-out", metrics)
		for _, want := range []string{tc.wantText, "SLO        no SLO given"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("rate %s: text summary lacks %q:\n%s", tc.rate, want, r.stdout)
			}
		}
		b, err := os.ReadFile(metrics)
		if err != nil {
			t.Fatal(err)
		}
		s := summaryOf(t, b)
		if s["steady_state"] != tc.steady || s["goodput_rps"] != nil || s["slo_attainment"] != nil {
			t.Errorf("rate %s: steady_state %v, goodput_rps %v, slo_attainment %v; want %v, null, null",
				tc.rate, s["steady_state"], s["goodput_rps"], s["slo_attainment"], tc.steady)
		}
		r = mustReplay(t, nil, prefix+".csv", "--format", "text", "--slo", "ttft.p99<500ms")
		if !strings.Contains(r.stdout, "SLO        attainment ") {
			t.Errorf("rate %s with --slo: no attainment in\n%s", tc.rate, r.stdout)
		}
	}
	r := replayIn(nil, filepath.Join(dir, "r5.csv"), "--slo", "ttft<1s")
	if r.err == nil || !strings.Contains(r.stderr, "--slo") {
		t.Errorf("bad --slo: err %v, stderr %q; want an error naming --slo", r.err, r.stderr)
	}
}
