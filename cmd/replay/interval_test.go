package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/report"
	"servesim/internal/tracev2"
)

// TestIntervalCoverage: a "real" run whose steps take f times the model's
// (blackbox coefficients β × f, which scale every step exactly) is
// replayed on the model with --interval at σ = 8% (steps × 1 ∓ 13%), and
// calibrate --interval counts the real values inside the intervals (each
// request's spanning its arrival's phase in the step in flight): nearly
// all values and every percentile when f is within σ, few E2E values and
// no percentile when f is well outside it.
func TestIntervalCoverage(t *testing.T) {
	beta := func(f float64) string {
		b, _ := json.Marshal([]float64{6000 * f, 20 * f, 40 * f})
		return strings.Trim(string(b), "[]")
	}
	for _, c := range []struct {
		f   float64 // the real server's steps: the model's × f
		low bool    // f outside 1 ± 1.645σ: low coverage wanted
	}{
		{f: 1.06},
		{f: 0.93},
		{f: 1.4, low: true},
	} {
		dir := t.TempDir()
		real := filepath.Join(dir, "real")
		execRun(t, "--workload", "chatbot", "--rate", "8", "--num-requests", "300", "--latency-model", "blackbox",
			"--alpha-coeffs", "0,0,0", "--beta-coeffs", beta(c.f), "--trace-output", real)
		sim := filepath.Join(dir, "sim.json")
		mustReplay(t, nil, real+".csv", "--latency-model", "blackbox", "--alpha-coeffs", "0,0,0", "--beta-coeffs", beta(1),
			"--step-time-sigma", "0.08", "--interval", "--results-path", sim)
		lo, hi := tracev2.IntervalResultPaths(sim)
		if n := len(readSimResults(t, lo)); n != 300 || len(readSimResults(t, hi)) != 300 {
			t.Fatalf("f %v: %d results in %s, want 300 in both ends", c.f, n, lo)
		}
		out, err := exec.Command(bins.Path(t, "calibrate"), real+".csv", sim, "--interval", "--format", "json", "--quiet").Output()
		if err != nil {
			t.Fatalf("calibrate: %v", err)
		}
		var rep report.Report
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatal(err)
		}
		cov := rep.Coverage
		if cov == nil {
			t.Fatalf("f %v: no interval_coverage in %s", c.f, out)
		}
		for _, name := range []string{"ttft", "e2e"} {
			mc := cov.Metrics[name]
			if mc.Phased < 250 {
				t.Errorf("f %v %s: %d of 300 requests spanned a step in flight; at 8 req/s nearly all arrive during one", c.f, name, mc.Phased)
			}
			if mc.Requests != 300 {
				t.Errorf("f %v %s: %d requests, want 300", c.f, name, mc.Requests)
			}
			// Per request, each value spans its arrival's phase in the step
			// in flight, as wide as a step: within σ nearly all fall
			// inside; 40% off, a request's TTFT (about two steps) still
			// lands inside its phase span often, but its percentiles and
			// its E2E do not.
			want, wantLow := 0.9, 0.2
			if name == "ttft" {
				wantLow = 0.6
			}
			inside := mc.Percentiles[0].Inside && mc.Percentiles[1].Inside && mc.Percentiles[2].Inside
			switch {
			case !c.low && (mc.Share < want || !inside):
				t.Errorf("f %v within σ, %s: coverage %.1f%%, percentiles %+v; want ≥ %.0f%% and all inside", c.f, name, 100*mc.Share, mc.Percentiles, 100*want)
			case c.low && (mc.Share > wantLow || mc.Percentiles[0].Inside || mc.Percentiles[2].Inside || mc.Above < mc.Requests/2):
				t.Errorf("f %v outside σ, %s: coverage %.1f%% (%d above), percentiles %+v; want low, real above", c.f, name, 100*mc.Share, mc.Above, mc.Percentiles)
			}
		}
	}
	if r := replayIn(nil, "x.csv", "--interval"); exitcode.Of(r.err) != 2 || !strings.Contains(r.stderr, "--interval writes the results of its two runs beside --results-path FILE") {
		t.Errorf("--interval without --results-path: exit %d, %q", exitcode.Of(r.err), r.stderr)
	}
}
