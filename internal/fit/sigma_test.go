package fit

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestStepTimeSigma: σ is √(π/2) × the larger of the E2E and TTFT MAPE,
// of the held-out requests when there are, bounded, and 0 when nothing was
// compared.
func TestStepTimeSigma(t *testing.T) {
	for _, c := range []struct {
		res  Result
		want float64
	}{
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.02}}, 0.0251},
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.02}, Holdout: Errors{N: 5, E2EMAPE: 0.04}}, 0.0501},
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.9}}, 0.5},
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.02, TTFTMAPE: 0.06}}, 0.0752},
		{Result{Fit: Errors{N: 10, E2EMAPE: 0.02, TTFTMAPE: 0.01}}, 0.0251},
		{Result{Fit: Errors{N: 10, TTFTMAPE: 0.06}, Holdout: Errors{N: 5, E2EMAPE: 0.04, TTFTMAPE: 0.03}}, 0.0501},
		{Result{}, 0},
	} {
		if got := StepTimeSigma(&c.res); got != c.want {
			t.Errorf("%+v: σ %v, want %v", c.res, got, c.want)
		}
	}
}

// TestStepTimeSigmaByLoad: σ is the largest of the rule over all the
// requests and over each load regime of at least minLoadRequests.
func TestStepTimeSigmaByLoad(t *testing.T) {
	e := Errors{N: 110, TTFTMAPE: 0.04, E2EMAPE: 0.02, ByLoad: map[Regime]Errors{
		RegimeLight:     {N: 40, TTFTMAPE: 0.09, E2EMAPE: 0.02},
		RegimeKnee:      {N: 10, TTFTMAPE: 0.30, E2EMAPE: 0.05}, // too few to count
		RegimeSaturated: {N: 60, TTFTMAPE: 0.01, E2EMAPE: 0.02},
	}}
	// Light: √(π/2) × 0.09 = 0.1128; pooled 0.0501; the knee's 0.376 is left out.
	if got := StepTimeSigma(&Result{Fit: e}); got != 0.113 {
		t.Errorf("σ %v, want 0.113 from the light load", got)
	}
	e.ByLoad[RegimeKnee] = Errors{N: 30, TTFTMAPE: 0.30}
	if got := StepTimeSigma(&Result{Fit: e}); got != 0.376 {
		t.Errorf("σ %v, want 0.376 once the knee has 30 requests", got)
	}
	e.ByLoad = nil
	if got := StepTimeSigma(&Result{Fit: e}); got != 0.0501 {
		t.Errorf("σ %v, want the pooled 0.0501 without loads", got)
	}
}

// TestErrorsByLoad: each compared request counts in its set and in the
// load regime the replay met at its arrival.
func TestErrorsByLoad(t *testing.T) {
	// The peak batch is 4 (all four run at 600 µs). r1 and r2 find no
	// queue and a batch under half of it (light), r3 finds two running,
	// exactly half (knee), r4 finds r3 waiting (saturated); r5 was never
	// scheduled and is left out of the regimes.
	res := map[int64]simResult{
		1: {completed: true, arrival: 0, sched: 0, done: 1000, ttft: 110, e2e: 1000},
		2: {completed: true, arrival: 100, sched: 100, done: 1000, ttft: 100, e2e: 900},
		3: {completed: true, arrival: 200, sched: 500, done: 1200, ttft: 500, e2e: 1000},
		4: {completed: true, arrival: 300, sched: 600, done: 1300, ttft: 400, e2e: 1000},
		5: {arrival: 400, sched: -1},
	}
	want := map[int64]Regime{1: RegimeLight, 2: RegimeLight, 3: RegimeKnee, 4: RegimeSaturated}
	if got := loadOf(res); !reflect.DeepEqual(got, want) {
		t.Fatalf("loads %v, want %v", got, want)
	}
	var ts []target
	for id := int64(1); id <= 5; id++ {
		ts = append(ts, target{id: id, ttftClient: 100, e2eClient: 1000})
	}
	e := errorsOf(ts, res, 0, false)
	if e.N != 4 || e.Missing != 1 || math.Abs(e.TTFTMAPE-(0.1+0+4+3)/4) > 1e-12 || math.Abs(e.E2EMAPE-0.1/4) > 1e-12 {
		t.Errorf("all: %+v", e)
	}
	light := e.ByLoad[RegimeLight]
	if light.N != 2 || math.Abs(light.TTFTMAPE-0.05) > 1e-12 || math.Abs(light.E2EMAPE-0.05) > 1e-12 {
		t.Errorf("light: %+v, want 2 requests, TTFT and E2E MAPE 0.05", light)
	}
	if k, s := e.ByLoad[RegimeKnee], e.ByLoad[RegimeSaturated]; k.N != 1 || k.TTFTMAPE != 4 || s.N != 1 || s.TTFTMAPE != 3 {
		t.Errorf("knee %+v, saturated %+v", k, s)
	}
	// Merging two traces pools each regime by its requests.
	m := e.merge(e)
	if l := m.ByLoad[RegimeLight]; l.N != 4 || math.Abs(l.TTFTMAPE-0.05) > 1e-12 || m.ByLoad[RegimeKnee].N != 2 {
		t.Errorf("merged: %+v", m.ByLoad)
	}
}

// TestSigmaComment: the fitted file's header says where σ comes from,
// every load with its requests and figure, a load too small marked, and a
// σ held at its bound said so.
func TestSigmaComment(t *testing.T) {
	res := &Result{Fit: Errors{N: 100, TTFTMAPE: 0.04, E2EMAPE: 0.02, ByLoad: map[Regime]Errors{
		RegimeLight: {N: 80, TTFTMAPE: 0.08}, RegimeSaturated: {N: 20, TTFTMAPE: 0.01}}}}
	want := "step_time_sigma 0.1 = √(π/2) × the larger of TTFT and E2E MAPE, the largest over all 100 fitted requests (0.0501)\n" +
		"and by load: light 80 requests 0.1, saturated 20 requests 0.0125 (under 30, not counted)."
	if got := sigmaComment(res); got != want {
		t.Errorf("comment\n%s\nwant\n%s", got, want)
	}
	if c := Comment(res, "t.csv"); !strings.Contains(c, "\n"+want+"\nUse:") {
		t.Errorf("the file's header lacks the σ lines:\n%s", c)
	}
	res.Holdout = Errors{N: 10, TTFTMAPE: 0.6}
	if got := sigmaComment(res); !strings.HasPrefix(got, "step_time_sigma 0.5 (the bound) ≤ √(π/2) × the larger of TTFT and E2E MAPE, the largest over all 10 held-out requests (0.752).") {
		t.Errorf("a σ at its bound: %s", got)
	}
	if got := sigmaComment(&Result{}); got != "" {
		t.Errorf("nothing compared: %q, want no line", got)
	}
}

// TestErrorsMergeLoads: merging pools each load by its requests, a side
// without loads adds nothing to them, and a request scheduled but never
// finished is missing in its load.
func TestErrorsMergeLoads(t *testing.T) {
	a := Errors{N: 2, nT: 2, nE: 2, TTFTMAPE: 0.1, E2EMAPE: 0.1, ByLoad: map[Regime]Errors{RegimeLight: {N: 2, nT: 2, nE: 2, TTFTMAPE: 0.1, E2EMAPE: 0.1}}}
	b := Errors{N: 2, nT: 2, nE: 2, TTFTMAPE: 0.3, E2EMAPE: 0.3}
	m := a.merge(b)
	if l := m.ByLoad[RegimeLight]; m.N != 4 || math.Abs(m.TTFTMAPE-0.2) > 1e-12 || l.N != 2 || l.TTFTMAPE != 0.1 || len(m.ByLoad) != 1 {
		t.Errorf("merged %+v", m)
	}
	if m := b.merge(b); m.ByLoad != nil {
		t.Errorf("two sides without loads gave loads %v", m.ByLoad)
	}
	res := map[int64]simResult{
		1: {completed: true, arrival: 0, sched: 0, done: 500, ttft: 100, e2e: 500},
		2: {arrival: 100, sched: 200}, // scheduled, never finished: running to the end
	}
	ts := []target{{id: 1, ttftClient: 100, e2eClient: 500}, {id: 2, ttftClient: 100, e2eClient: 500}}
	e := errorsOf(ts, res, 0, false)
	// r2 arrives with r1 running, the whole peak of 2 at 200 µs: knee.
	if k := e.ByLoad[RegimeKnee]; e.N != 1 || e.Missing != 1 || k.N != 0 || k.Missing != 1 || e.ByLoad[RegimeLight].N != 1 {
		t.Errorf("errors %+v", e)
	}
}
