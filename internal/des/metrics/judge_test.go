package metrics

import (
	"encoding/json"
	"strings"
	"testing"

	"servesim/internal/des/instance"
)

// val is a summary's optional figure, −1 when absent.
func val(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// fifoRun is n requests arriving every gapUs at one server that takes them
// in order, each for serviceUs, and completes each at once after it starts.
func fifoRun(t *testing.T, targets map[string]SLOTarget, n int, gapUs, serviceUs int64) Summary {
	t.Helper()
	agg, err := NewAggregator(targets)
	if err != nil {
		t.Fatal(err)
	}
	free := int64(0)
	for i := range n {
		arr := int64(i) * gapUs
		start := max(arr, free)
		free = start + serviceUs
		agg.Add(&instance.Result{Status: instance.StatusCompleted, ArrivalUs: arr, FirstScheduledUs: start,
			SchedulingDelayUs: start - arr, TTFTUs: free - arr, E2EUs: free - arr, OutputTokens: 1, PromptTokens: 1})
	}
	return agg.Summary(RunInfo{DurationUs: free})
}

// TestSummarySteadyState: a run whose queue grows for as long as requests
// arrive is flagged unstable in the summary, in words and in JSON; a light
// run is steady.
func TestSummarySteadyState(t *testing.T) {
	light := fifoRun(t, nil, 2000, 10_000, 5_000)
	if !light.SteadyState || light.Unstable != "" || light.QueueGrowth > 0.001 {
		t.Errorf("light run: steady %v, growth %g, unstable %q; want steady", light.SteadyState, light.QueueGrowth, light.Unstable)
	}
	// Service 11 ms for arrivals every 10 ms: 1/11 of the arrivals pile up.
	saturated := fifoRun(t, nil, 2000, 10_000, 11_000)
	if saturated.SteadyState || saturated.QueueGrowth < 0.08 || saturated.QueueGrowth > 0.1 {
		t.Errorf("saturated run: steady %v, growth %g; want unstable, growth about 0.09", saturated.SteadyState, saturated.QueueGrowth)
	}
	if want := "unstable: queue grows by 9.1%"; !strings.HasPrefix(saturated.Unstable, want) {
		t.Errorf("saturated run: unstable %q, want it to start with %q", saturated.Unstable, want)
	}
	b, err := json.Marshal(&saturated)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"steady_state":false`, `"unstable":"unstable: queue grows`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary JSON lacks %s: %s", want, b)
		}
	}
}

// TestSummaryWithoutSLO: without a target no request is judged, and the
// summary gives no goodput and no attainment (null in JSON), rather than
// 100% of every completed request.
func TestSummaryWithoutSLO(t *testing.T) {
	s := fifoRun(t, nil, 100, 10_000, 5_000)
	if s.SLOGiven || s.GoodputRPS != nil || s.SLOAttainment != nil || s.PerClass[DefaultClass].SLOAttainment != nil {
		t.Errorf("no SLO: given %v, goodput %v, attainment %v, class attainment %v; want none",
			s.SLOGiven, s.GoodputRPS, s.SLOAttainment, s.PerClass[DefaultClass].SLOAttainment)
	}
	b, err := json.Marshal(&s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"goodput_rps":null`, `"slo_attainment":null`, `"slo_given":false`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summary JSON lacks %s", want)
		}
	}
	// --slo gives every class a target (AnyClass): TTFT 5 ms holds for all.
	s = fifoRun(t, map[string]SLOTarget{AnyClass: {TTFTMs: 5}}, 100, 10_000, 5_000)
	if !s.SLOGiven || val(s.SLOAttainment) != 1 || val(s.PerClass[DefaultClass].SLOAttainment) != 1 {
		t.Errorf("--slo met by all: given %v, attainment %v, class %v; want 1", s.SLOGiven, val(s.SLOAttainment), val(s.PerClass[DefaultClass].SLOAttainment))
	}
	s = fifoRun(t, map[string]SLOTarget{AnyClass: {TTFTMs: 4}}, 100, 10_000, 5_000)
	if val(s.SLOAttainment) != 0 || val(s.GoodputRPS) != 0 {
		t.Errorf("--slo met by none: attainment %v, goodput %v; want 0", val(s.SLOAttainment), val(s.GoodputRPS))
	}
}
