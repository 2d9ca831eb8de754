package metrics

import (
	"math/rand/v2"
	"testing"

	"servesim/internal/des/instance"
)

// BenchmarkSummary is the end of every simulated run: 200k completed
// requests in two SLO classes and an ITL histogram of 4k distinct values,
// summarised (sorts, means and percentiles of every column).
func BenchmarkSummary(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	agg, err := NewAggregator(nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 200_000 {
		res := instance.Result{ID: int64(i), Status: instance.StatusCompleted, SLOClass: []string{"", "batch"}[i%2],
			TTFTUs: rng.Int64N(300_000), E2EUs: rng.Int64N(20_000_000), SchedulingDelayUs: rng.Int64N(50_000),
			OutputTokens: 2 + rng.IntN(300), ITLSumUs: rng.Int64N(9_000_000)}
		agg.Add(&res)
	}
	var itl []instance.ValueCount
	for v := range int64(4096) {
		itl = append(itl, instance.ValueCount{Value: 10_000 + 7*v, Count: 1 + rng.Int64N(500)})
	}
	info := RunInfo{DurationUs: 600_000_000, ITL: itl}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = agg.Summary(info)
	}
}
