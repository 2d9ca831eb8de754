package replay

import (
	"strings"
	"testing"

	"servesim/internal/des/metrics"
)

// TestTextRegret: the text summary's regret table, one line per policy
// and pool, absent without --counterfactual-k.
func TestTextRegret(t *testing.T) {
	s := &metrics.Summary{}
	if strings.Contains(TextSummary(s), "routing regret") {
		t.Error("a regret table without regret")
	}
	s.RoutingRegret = []metrics.RegretSummary{{Policy: "round-robin", Decisions: 300, Mean: 1.25, P99: 7.01, Max: 11, Positive: 125},
		{Policy: "weighted", Pool: "decode", Decisions: 12}}
	got := TextSummary(s)
	for _, want := range []string{
		"routing regret        decisions       mean        p99        max regret > 0\n",
		"round-robin                 300       1.25       7.01         11        125\n",
		"weighted (decode)            12          0          0          0          0\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("text summary lacks %q:\n%s", want, got)
		}
	}
}

// TestTextFitness: the fitness line and, per metric, its weight, raw and
// normalised value; absent without --fitness-weights.
func TestTextFitness(t *testing.T) {
	s := &metrics.Summary{ResponsesPerSec: 25, TTFTP99Ms: 3}
	if strings.Contains(TextSummary(s), "fitness") {
		t.Error("a fitness line without weights")
	}
	ws, err := FlagFitness("throughput:0.5,p99_ttft:0.5")
	if err != nil {
		t.Fatal(err)
	}
	s.Fitness = metrics.ComputeFitness(s, ws)
	got := TextSummary(s)
	for _, want := range []string{
		"fitness 0.2250 = Σ weight × normalised\n",
		"throughput            0.5    25.00 req/s      0.2000\n",
		"p99_ttft              0.5        3.00 ms      0.2500\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("text summary lacks %q:\n%s", want, got)
		}
	}
	if _, err := FlagFitness("p99_ttft:x"); err == nil || !strings.HasPrefix(err.Error(), "--fitness-weights: ") {
		t.Errorf("a bad weight: %v", err)
	}
	if ws, err := FlagFitness(" "); ws != nil || err != nil {
		t.Errorf("no weights: %v, %v", ws, err)
	}
}
