package metrics

import (
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/quantile"
)

// reference is the summary's latency figures computed the plain way: every
// value kept as int64, sorted copies, class columns kept from the start.
type reference struct {
	ttft, e2e, sched []int64
	tpot             []float64
	cls              map[string][2][]int64
}

func (r *reference) add(res *instance.Result) {
	if res.Status != instance.StatusCompleted {
		return
	}
	r.ttft = append(r.ttft, res.TTFTUs)
	r.e2e = append(r.e2e, res.E2EUs)
	r.sched = append(r.sched, res.SchedulingDelayUs)
	if res.OutputTokens >= 2 {
		r.tpot = append(r.tpot, res.TPOTUs())
	}
	c := r.cls[orDefault(res.SLOClass)]
	c[0], c[1] = append(c[0], res.TTFTUs), append(c[1], res.E2EUs)
	r.cls[orDefault(res.SLOClass)] = c
}

func (r *reference) check(t *testing.T, round int, s Summary) {
	t.Helper()
	sorted := func(v []int64) []int64 { w := slices.Clone(v); slices.Sort(w); return w }
	ttft, e2e, sched := sorted(r.ttft), sorted(r.e2e), sorted(r.sched)
	tpot := slices.Clone(r.tpot)
	sort.Float64s(tpot)
	var ts float64
	for _, v := range tpot {
		ts += v
	}
	want := map[string][2]float64{
		"ttft mean": {s.TTFTMeanMs, meanInt(ttft) / usPerMs},
		"ttft p50":  {s.TTFTP50Ms, quantile.Sorted(ttft, 50) / usPerMs},
		"ttft p99":  {s.TTFTP99Ms, quantile.Sorted(ttft, 99) / usPerMs},
		"e2e mean":  {s.E2EMeanMs, meanInt(e2e) / usPerMs},
		"e2e p90":   {s.E2EP90Ms, quantile.Sorted(e2e, 90) / usPerMs},
		"e2e p95":   {s.E2EP95Ms, quantile.Sorted(e2e, 95) / usPerMs},
		"sched p99": {s.SchedulingDelayP99Ms, quantile.Sorted(sched, 99) / usPerMs},
		"tpot p99":  {s.TPOTP99Ms, quantile.Sorted(tpot, 99) / usPerMs},
	}
	if len(tpot) > 0 {
		want["tpot mean"] = [2]float64{s.TPOTMeanMs, ts / float64(len(tpot)) / usPerMs}
	}
	for name, c := range r.cls {
		cs := s.PerClass[name]
		want[name+" ttft p99"] = [2]float64{cs.TTFTP99Ms, quantile.Sorted(sorted(c[0]), 99) / usPerMs}
		want[name+" e2e p99"] = [2]float64{cs.E2EP99Ms, quantile.Sorted(sorted(c[1]), 99) / usPerMs}
	}
	for k, v := range want {
		if v[0] != v[1] { // bit for bit: the same values summed in the same order
			t.Fatalf("round %d: %s = %v, want %v", round, k, v[0], v[1])
		}
	}
}

// TestCompactColumnsChangeNothing: the summary's means and percentiles,
// overall and per class, are those of plain int64 columns, bit for bit,
// whatever the values (some beyond 2³² µs or negative, which widen a
// column), however late a second class appears, and when Summary is
// called again after more results.
func TestCompactColumnsChangeNothing(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for round := 0; round < 300; round++ {
		agg, err := NewAggregator(nil)
		if err != nil {
			t.Fatal(err)
		}
		ref := &reference{cls: map[string][2][]int64{}}
		classes := []string{"", "critical", "batch"}[:1+rng.IntN(3)]
		second := rng.IntN(400) // results before a second class may appear
		n := 1 + rng.IntN(800)
		for i := 0; i < n; i++ {
			res := instance.Result{Status: instance.StatusCompleted, SLOClass: classes[0],
				TTFTUs: rng.Int64N(300_000), E2EUs: rng.Int64N(20_000_000), SchedulingDelayUs: rng.Int64N(50_000),
				OutputTokens: rng.IntN(300), ITLSumUs: rng.Int64N(9_000_000)}
			if i >= second {
				res.SLOClass = classes[rng.IntN(len(classes))]
			}
			switch rng.IntN(40) {
			case 0:
				res.E2EUs = 1<<32 + rng.Int64N(1<<33) // a column widens
			case 1:
				res.SchedulingDelayUs = -1
			case 2:
				res.Status = instance.StatusTimedOut
			}
			agg.Add(&res)
			ref.add(&res)
			if i == n/2 && rng.IntN(2) == 0 {
				ref.check(t, round, agg.Summary(RunInfo{DurationUs: 1e6}))
			}
		}
		ref.check(t, round, agg.Summary(RunInfo{DurationUs: 1e6}))
	}
}
