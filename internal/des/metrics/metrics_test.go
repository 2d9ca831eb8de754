package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/quantile"
)

func TestHistogramPercentileEqualsExpanded(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := 0; round < 200; round++ {
		var h []instance.ValueCount
		var flat []int64
		for k := 0; k < 1+rng.IntN(8); k++ {
			vc := instance.ValueCount{Value: rng.Int64N(30), Count: 1 + rng.Int64N(5)}
			h = append(h, vc)
			for c := int64(0); c < vc.Count; c++ {
				flat = append(flat, vc.Value)
			}
		}
		h = MergeHistograms(h)
		slices.Sort(flat)
		for _, p := range []float64{50, 90, 99} {
			if got, want := HistPercentile(h, p), quantile.Sorted(flat, p); math.Abs(got-want) > 1e-9 {
				t.Fatalf("p %g: got %g, want %g (hist %v)", p, got, want, h)
			}
		}
		var s float64
		for _, x := range flat {
			s += float64(x)
		}
		if got, want := HistMean(h), s/float64(len(flat)); math.Abs(got-want) > 1e-9 {
			t.Fatalf("mean: got %g, want %g", got, want)
		}
	}
}

func TestJain(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{{nil, 1}, {[]float64{0, 0}, 1}, {[]float64{5, 5, 5}, 1}, {[]float64{1, 0}, 0.5}, {[]float64{1, 3}, 16.0 / 20}}
	for _, tc := range tests {
		if got := Jain(tc.xs); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Jain(%v): got %g, want %g", tc.xs, got, tc.want)
		}
	}
}

func TestAggregatorSummary(t *testing.T) {
	agg, err := NewAggregator(map[string]SLOTarget{"critical": {TTFTMs: 1}})
	if err != nil {
		t.Fatal(err)
	}
	results := []instance.Result{
		{Status: instance.StatusCompleted, SLOClass: "critical", Tenant: "a", TTFTUs: 500, E2EUs: 2000, ITLSumUs: 1500, ITLCount: 3, OutputTokens: 4, PromptTokens: 10, SchedulingDelayUs: 100},
		{Status: instance.StatusCompleted, SLOClass: "critical", Tenant: "b", TTFTUs: 1500, E2EUs: 3000, ITLSumUs: 0, ITLCount: 0, OutputTokens: 1, PromptTokens: 20, LengthCapped: true},
		{Status: instance.StatusDropped, Tenant: "a"},
		{Status: instance.StatusTimedOut},
		{Status: instance.StatusQueued},
		{Status: instance.StatusRunning},
		{Status: instance.StatusRejected},
	}
	for i := range results {
		agg.Add(&results[i])
	}
	s := agg.Summary(RunInfo{DurationUs: 2e6, Preemptions: 3, KVUsedBlockUs: 50, KVCapacityBlockUs: 200, KVPeak: 0.5,
		CacheHits: 1, CacheMisses: 3, ITL: []instance.ValueCount{{Value: 500, Count: 3}}})
	checks := []struct {
		name      string
		got, want float64
	}{
		{"injected", float64(s.InjectedRequests), 7},
		{"completed", float64(s.CompletedRequests), 2},
		{"conservation", float64(s.CompletedRequests + s.StillQueued + s.StillRunning + s.DroppedUnservable + s.TimedOutRequests + s.RejectedRequests), 7},
		{"input tokens", float64(s.TotalInputTokens), 30},
		{"responses/s", s.ResponsesPerSec, 1},
		{"tokens/s", s.TokensPerSec, 2.5},
		{"ttft mean", s.TTFTMeanMs, 1},
		{"ttft p99", s.TTFTP99Ms, 0.5 + 0.99},
		{"tpot mean (one request with ≥2 tokens)", s.TPOTMeanMs, 0.5},
		{"itl mean", s.ITLMeanMs, 0.5},
		{"goodput (only r1 meets TTFT ≤ 1 ms)", val(s.GoodputRPS), 0.5},
		{"attainment", val(s.SLOAttainment), 1.0 / 7},
		{"critical attainment", val(s.PerClass["critical"].SLOAttainment), 0.5},
		{"kv mean", s.KVUtilizationMean, 0.25},
		{"hit rate", s.CacheHitRate, 0.25},
		{"length capped", float64(s.LengthCappedRequests), 1},
		{"jain over tenants a=4, b=1, default=0", s.JainFairnessIndex, 25.0 / (3 * 17)},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s: got %g, want %g", c.name, c.got, c.want)
		}
	}
}

// TestSummaryKeys: the summary JSON carries every key of docs/simulator.md §14.
func TestSummaryKeys(t *testing.T) {
	agg, _ := NewAggregator(nil)
	b, err := json.Marshal(agg.Summary(RunInfo{}))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := []string{"completed_requests", "still_queued", "still_running", "injected_requests", "total_input_tokens",
		"total_output_tokens", "vllm_estimated_duration_s", "responses_per_sec", "tokens_per_sec",
		"scheduling_delay_p99_ms", "preemption_count", "dropped_unservable", "length_capped_requests",
		"timed_out_requests", "goodput_rps", "slo_attainment", "per_class", "rejected_requests",
		"kv_utilization_mean", "kv_utilization_peak", "cache_hit_rate", "per_tenant", "jain_fairness_index"}
	for _, m1 := range []string{"ttft", "e2e", "itl", "tpot"} {
		for _, s := range []string{"mean", "p50", "p90", "p95", "p99"} {
			keys = append(keys, m1+"_"+s+"_ms")
		}
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("summary lacks key %q", k)
		}
	}
}
