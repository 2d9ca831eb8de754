package metrics

import (
	"math"
	"testing"

	"servesim/internal/quantile"
)

// TestSummarizeRegret: the summary of zeros implied and positive regrets
// given equals the summary of every value listed, by the one percentile
// rule.
func TestSummarizeRegret(t *testing.T) {
	for _, tc := range []struct {
		n   int64
		pos []float64
	}{
		{0, nil}, {5, nil}, {1, []float64{0.5}}, {100, []float64{0.3, 0.1}}, {200, []float64{0.9, 0.2, 0.4, 0.7}},
		{3, []float64{1, 2, 3}},
	} {
		all := make([]float64, tc.n-int64(len(tc.pos)))
		all = append(all, tc.pos...)
		var sum, mx float64
		for _, v := range all {
			sum += v
			mx = math.Max(mx, v)
		}
		want := RegretSummary{Policy: "round-robin", Decisions: tc.n, Max: mx, Positive: int64(len(tc.pos)), P99: quantile.Of(all, 99)}
		if tc.n > 0 {
			want.Mean = sum / float64(tc.n)
		}
		got := SummarizeRegret("round-robin", "", tc.n, append([]float64(nil), tc.pos...))
		if math.Abs(got.Mean-want.Mean) > 1e-12 || got.P99 != want.P99 || got.Max != want.Max || got.Positive != want.Positive || got.Decisions != want.Decisions {
			t.Errorf("n %d positive %v: got %+v, want %+v", tc.n, tc.pos, got, want)
		}
	}
}
