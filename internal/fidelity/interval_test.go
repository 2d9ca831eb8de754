package fidelity

import (
	"context"
	"math"
	"testing"

	"servesim/internal/des/latency"
	"servesim/internal/report"
	"servesim/internal/tracev2"
)

// intervalRun is TestRegimes' run (light, light, saturated, knee) with one
// more request that has no measured schedule (no load class), every TTFT
// its own, and the three replays of each request chosen so that its real
// value lies inside, below or above their range.
func intervalRun() (r *Run, mid, lo, hi []tracev2.SimResult) {
	rec := func(id, send, first, last int64) tracev2.Record {
		return tracev2.Record{RequestID: id, SendTimeUs: send, ArrivalTimeUs: send, FirstChunkTimeUs: first, LastChunkTimeUs: last,
			InputTokens: 10, OutputTokens: 5, Streaming: true, Status: "ok"}
	}
	r = &Run{Name: "hand-made", Records: []tracev2.Record{
		rec(0, 100, 150, 1000),   // TTFT 50, E2E 900
		rec(1, 200, 260, 2000),   // 60, 1800
		rec(2, 250, 330, 2000),   // 80, 1750
		rec(3, 1200, 1240, 3000), // 40, 1800
		rec(4, 3100, 3150, 3500), // 50, 400
	}, Scheduled: []int64{100, 300, 300, 1200, 0}}
	// {lo, mid, hi} of TTFT and E2E per request.
	ttft := [][3]float64{{40, 45, 55}, {62, 70, 75}, {70, 90, 100}, {45, 50, 55}, {45, 50, 55}}
	e2e := [][3]float64{{800, 850, 880}, {1700, 1800, 1900}, {1600, 1700, 1740}, {1900, 2000, 2100}, {350, 400, 450}}
	for i := range r.Records {
		for j, out := range []*[]tracev2.SimResult{&lo, &mid, &hi} {
			*out = append(*out, tracev2.SimResult{RequestID: int64(i), TTFTUs: ttft[i][j], E2EUs: e2e[i][j], InputTokens: 10, OutputTokens: 5})
		}
	}
	return r, mid, lo, hi
}

// TestIntervalByRegime grades a hand-made run against its interval: all
// requests, then each load class's on its own (the unclassified request
// only in the first), and pools two runs.
func TestIntervalByRegime(t *testing.T) {
	r, mid, lo, hi := intervalRun()
	iv, err := intervalOf(r, 0.1, mid, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	count := func(c *report.Coverage, name string) Count {
		var n Count
		n.addRequests(c.Metrics[name])
		return n
	}
	// TTFT: 0, 2 and 4 inside, 1 and 3 below; E2E: 1 and 4 inside, 3
	// below, 0 and 2 above.
	if got, want := count(iv.Coverage, "ttft"), (Count{N: 5, Inside: 3, Below: 2}); got != want {
		t.Errorf("ttft %+v, want %+v", got, want)
	}
	if got, want := count(iv.Coverage, "e2e"), (Count{N: 5, Inside: 2, Below: 1, Above: 2}); got != want {
		t.Errorf("e2e %+v, want %+v", got, want)
	}
	if iv.Sigma != 0.1 || len(iv.Coverage.Metrics["ttft"].Percentiles) != 3 {
		t.Errorf("sigma %v, percentiles %+v", iv.Sigma, iv.Coverage.Metrics["ttft"].Percentiles)
	}
	want := map[Regime][2]Count{
		RegimeLight:     {{N: 2, Inside: 1, Below: 1}, {N: 2, Inside: 1, Above: 1}}, // requests 0 and 1
		RegimeSaturated: {{N: 1, Inside: 1}, {N: 1, Above: 1}},                      // 2
		RegimeKnee:      {{N: 1, Below: 1}, {N: 1, Below: 1}},                       // 3
	}
	if len(iv.Regimes) != len(want) {
		t.Errorf("%d regimes graded, want %d", len(iv.Regimes), len(want))
	}
	for g, w := range want {
		cov, ok := iv.Regimes[g]
		if !ok {
			t.Errorf("%s: not graded", g)
			continue
		}
		if got := [2]Count{count(cov, "ttft"), count(cov, "e2e")}; got != w {
			t.Errorf("%s: ttft, e2e %+v, want %+v", g, got, w)
		}
	}

	p := poolCoverage([]*Interval{iv, nil, iv})
	if p.Runs != 2 || p.Requests["ttft"] != (Count{N: 10, Inside: 6, Below: 4}) || p.Requests["e2e"].Share() != 0.4 {
		t.Errorf("pooled %+v", p)
	}
	if got := p.Regimes[RegimeLight]["e2e"]; got != (Count{N: 4, Inside: 2, Above: 2}) {
		t.Errorf("pooled light e2e %+v", got)
	}
	for _, name := range CoverageMetrics() {
		for i, st := range CoverageStats() {
			pc := iv.Coverage.Metrics[name].Percentiles[i]
			inside := map[bool]int{true: 2}[pc.Inside]
			if got := p.Percentiles[name+" "+st]; got.N != 2 || got.Inside != inside || pc.Stat != st {
				t.Errorf("pooled %s %s %+v, the run's %+v", name, st, got, pc)
			}
		}
	}
}

// TestFitSigma: a fit's σ is calibrate fit's rule on its training runs'
// requests pooled, and the physics default without any.
func TestFitSigma(t *testing.T) {
	f := &FitResult{PerRun: []RunError{{N: 100, E2EMAPE: 0.02, TTFTMAPE: 0.01}, {N: 300, E2EMAPE: 0.04, TTFTMAPE: 0.02}}}
	// √(π/2) × 0.035 = 0.043865…, kept to 3 digits (E2E's MAPE is the larger).
	if got := f.StepTimeSigma(); got != 0.0439 {
		t.Errorf("σ %v, want 0.0439", got)
	}
	f.PerRun[0].TTFTMAPE, f.PerRun[1].TTFTMAPE = 0.06, 0.1
	// TTFT's 0.09 is the larger: √(π/2) × 0.09 = 0.1128.
	if got := f.StepTimeSigma(); got != 0.113 {
		t.Errorf("σ %v, want 0.113 from the TTFT MAPE", got)
	}
	// A training run with nothing compared adds nothing, wherever it is.
	empty := &FitResult{PerRun: append([]RunError{{}}, f.PerRun...)}
	if got := empty.StepTimeSigma(); got != 0.113 {
		t.Errorf("σ %v with an empty run first, want 0.113", got)
	}
	// By load: the light requests of both runs (30 + 10 = 40, enough to
	// count) pool to TTFT MAPE (30·0.2 + 10·0.04) / 40 = 0.16, whose
	// √(π/2) × 0.16 = 0.2005 exceeds the pooled 0.113; the knee's 20 are
	// too few.
	f.PerRun[0].ByLoad = map[Regime]RegimeErrors{RegimeLight: {N: 30, TTFTMAPE: 0.2}, RegimeKnee: {N: 20, TTFTMAPE: 0.9}}
	f.PerRun[1].ByLoad = map[Regime]RegimeErrors{RegimeLight: {N: 10, TTFTMAPE: 0.04}}
	if got := f.StepTimeSigma(); got != 0.201 {
		t.Errorf("σ %v, want 0.201 from the light load", got)
	}
	if got, want := (&FitResult{}).StepTimeSigma(), latency.DefaultSigmaOf(latency.KindPhysics); got != want {
		t.Errorf("σ without training requests %v, want the default %v", got, want)
	}
}

// TestReplayAtScale: an interval's replay takes the model's step times ×
// the scale, and its step log (the clock of every figure) logs them so.
func TestReplayAtScale(t *testing.T) {
	c := syntheticCase(t, Universal{HostStepUs: 700})
	cfg, err := c.Deployment(Universal{HostStepUs: 700})
	if err != nil {
		t.Fatal(err)
	}
	one, err := c.replayAt(context.Background(), cfg, Universal{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	slow, err := c.replayAt(context.Background(), cfg, Universal{}, 1.5)
	if err != nil {
		t.Fatal(err)
	}
	// The first step holds the same request either way.
	d1, d2 := one.rec.EndUs(0)-one.rec.StartUs(0), slow.rec.EndUs(0)-slow.rec.StartUs(0)
	if d1 < 1000 || d2 != int64(math.Floor(1.5*float64(d1))) {
		t.Errorf("first step %d µs at scale 1, %d at 1.5", d1, d2)
	}
	if len(one.sims) != len(slow.sims) || !(slow.rawE2EMean > 1.2*one.rawE2EMean) {
		t.Errorf("scale 1: %d requests, mean E2E %.0f µs; 1.5: %d, %.0f µs", len(one.sims), one.rawE2EMean,
			len(slow.sims), slow.rawE2EMean)
	}
	if _, err := c.replayAt(context.Background(), cfg, Universal{}, -1); err == nil {
		t.Error("a negative scale replayed")
	}
	// Counted from the step in flight's end, no result holds the arrival's
	// phase in that step, which an interval would otherwise span twice.
	for _, s := range slow.sims {
		if s.WaitInFlightUs != 0 || s.StepInFlightUs != 0 {
			t.Errorf("request %d keeps a phase (wait %v of a %v µs step) on a clock that starts after it", s.RequestID, s.WaitInFlightUs, s.StepInFlightUs)
		}
	}
}

// TestByGPU pools the runs of each GPU, every request weighing the same.
func TestByGPU(t *testing.T) {
	m := func(n int, ttft, e2e float64) map[string]Metrics {
		return map[string]Metrics{"ttft": {N: n, MAPE: ttft}, "e2e": {N: n, MAPE: e2e}}
	}
	runs := []RunReport{
		{GPU: "A", Metrics: m(100, 0.1, 0.02), Unfitted: &Assessment{Metrics: m(100, 0.3, 0.2)}},
		{GPU: "B", Metrics: m(50, 0.05, 0.01)},
		{GPU: "A", Metrics: m(300, 0.02, 0.06), Unfitted: &Assessment{Metrics: m(300, 0.1, 0.1)}},
	}
	got := byGPU(runs)
	want := []GPUErrors{
		{GPU: "A", Runs: 2, Fitted: RegimeErrors{N: 400, TTFTMAPE: 0.04, E2EMAPE: 0.05}, Unfitted: RegimeErrors{N: 400, TTFTMAPE: 0.15, E2EMAPE: 0.125}},
		{GPU: "B", Runs: 1, Fitted: RegimeErrors{N: 50, TTFTMAPE: 0.05, E2EMAPE: 0.01}},
	}
	near := func(a, b RegimeErrors) bool {
		return a.N == b.N && math.Abs(a.TTFTMAPE-b.TTFTMAPE) < 1e-12 && math.Abs(a.E2EMAPE-b.E2EMAPE) < 1e-12
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].GPU != want[i].GPU || got[i].Runs != want[i].Runs || !near(got[i].Fitted, want[i].Fitted) || !near(got[i].Unfitted, want[i].Unfitted) {
			t.Errorf("GPU %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestUnfittedSigma: an unfitted interval's σ is calibrate fit's rule on
// the other runs' unfitted replays (over all their requests and by load),
// never on the run's own; with no other run, the physics default.
func TestUnfittedSigma(t *testing.T) {
	run := func(name string, ttft, e2e float64) RunReport {
		return RunReport{Name: name, Unfitted: &Assessment{Metrics: map[string]Metrics{
			report.MetricTTFT: {N: 100, MAPE: ttft}, report.MetricE2E: {N: 100, MAPE: e2e}}}}
	}
	runs := []RunReport{run("a", 0.10, 0.05), run("b", 0.30, 0.05), run("c", 0.02, 0.12)}
	for _, c := range []struct {
		except string
		want   float64
	}{
		{"a", 0.201}, // TTFT (0.30 + 0.02) / 2 = 0.16 is the larger; √(π/2) × 0.16 = 0.2005
		{"b", 0.107}, // E2E (0.05 + 0.12) / 2 = 0.085 beats TTFT 0.06; √(π/2) × 0.085 = 0.1065
		{"", 0.175},  // TTFT (0.10 + 0.30 + 0.02) / 3 = 0.14; √(π/2) × 0.14 = 0.1755
	} {
		if got := UnfittedSigma(runs, c.except); math.Abs(got-c.want) > 0.0006 {
			t.Errorf("except %q: σ %v, want %v", c.except, got, c.want)
		}
	}
	if got, want := UnfittedSigma(runs[:1], "a"), latency.DefaultSigmaOf(latency.KindPhysics); got != want {
		t.Errorf("no other run: σ %v, want the default %v", got, want)
	}
	// By load, as calibrate fit takes it: a light load of 40 requests
	// pooled over b and c at TTFT (20·0.40 + 20·0.20) / 40 = 0.30 wins
	// (√(π/2) × 0.30 = 0.376); a knee of 20 requests, fewer than 30, does
	// not count however large its error.
	runs[1].Unfitted.ByLoad = map[Regime]RegimeErrors{RegimeLight: {N: 20, TTFTMAPE: 0.40, E2EMAPE: 0.05}, RegimeKnee: {N: 20, TTFTMAPE: 0.9}}
	runs[2].Unfitted.ByLoad = map[Regime]RegimeErrors{RegimeLight: {N: 20, TTFTMAPE: 0.20, E2EMAPE: 0.05}}
	if got := UnfittedSigma(runs, "a"); math.Abs(got-0.376) > 0.0006 {
		t.Errorf("by load: σ %v, want 0.376 from the light load", got)
	}
	if got := UnfittedSigma(runs, "b"); math.Abs(got-0.107) > 0.0006 {
		t.Errorf("c's light load alone (20 requests) counted: σ %v, want the pooled 0.107", got)
	}
}
