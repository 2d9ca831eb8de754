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
