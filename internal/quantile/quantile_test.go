package quantile

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/montanaflynn/stats"
)

// same is equality that holds NaN equal to NaN.
func same(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

// TestRuleTable pins the rule's values, worked by hand from
// rank = p/100·(n−1) (NumPy's np.percentile gives the same).
func TestRuleTable(t *testing.T) {
	tests := []struct {
		xs   []float64 // sorted
		p    float64
		want float64
	}{
		{nil, 50, 0},
		{[]float64{7}, 99, 7},
		{[]float64{7}, 0, 7},
		{[]float64{1, 2, 3, 4}, 50, 2.5},     // rank 1.5: the mean of the middle two
		{[]float64{0, 10}, 90, 9},            // rank 0.9
		{[]float64{1, 2, 3, 4, 5}, 99, 4.96}, // rank 3.96
		{[]float64{1, 2, 3, 4, 5}, 0, 1},     // the minimum
		{[]float64{1, 2, 3, 4, 5}, 100, 5},   // the maximum
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 90, 9.1},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 9.55},
		{[]float64{1, 3, 7, 10}, 50, 5},
		{[]float64{1, 1000, 1e6}, 99, 980020},
		{[]float64{2, 2, 2, 9}, 50, 2}, // equal neighbours: no interpolation
		{[]float64{math.NaN(), 1, 2}, 50, math.NaN()},
		{[]float64{1, math.Inf(1)}, 50, math.Inf(1)},
		{[]float64{math.Inf(-1), 1}, 50, math.Inf(-1)},
		{[]float64{-math.MaxFloat64, math.MaxFloat64}, 50, 0}, // the difference overflows
	}
	for _, tc := range tests {
		if got := Sorted(tc.xs, tc.p); !same(got, tc.want) && math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Sorted(%v, %g): got %g, want %g", tc.xs, tc.p, got, tc.want)
		}
	}
}

func TestIntegerColumns(t *testing.T) {
	if got, want := Sorted([]int64{1, 2, 3, 4, 5}, 99), 4.96; math.Abs(got-want) > 1e-9 {
		t.Errorf("int64: got %g, want %g", got, want)
	}
	if got, want := Sorted([]uint32{0, 10}, 90), 9.0; got != want {
		t.Errorf("uint32: got %g, want %g", got, want)
	}
}

// TestMatchesStatsLibrary: the rule is montanaflynn/stats.Percentile's, bit
// for bit, on integer columns and on floats with ties, infinities, NaNs and
// values whose differences overflow; a change on either side fails here.
func TestMatchesStatsLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n < 60; n++ {
		v := make([]int64, n)
		f := make([]float64, n)
		for i := range v {
			v[i] = rng.Int64N(50)
			f[i] = float64(v[i])
		}
		slices.Sort(v)
		for _, p := range []float64{1, 50, 90, 95, 99, 100} {
			want, _ := stats.Percentile(f, p)
			if got := Sorted(v, p); got != want {
				t.Fatalf("n %d p %g: got %g, want %g", n, p, got, want)
			}
		}
	}
	special := []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, -math.MaxFloat64, 0, 1e-300}
	for round := range 2000 {
		xs := make([]float64, 1+rng.IntN(12))
		for i := range xs {
			xs[i] = rng.NormFloat64() * 1e3
			if round%3 == 0 && rng.IntN(6) == 0 {
				xs[i] = special[rng.IntN(len(special))]
			}
		}
		for _, p := range []float64{0.5, 1, 25, 50, 90, 95, 99, 99.9, 100} {
			want, _ := stats.Percentile(xs, p)
			if got := Of(xs, p); !same(got, want) {
				t.Fatalf("Of(%v, %g): got %g, want %g", xs, p, got, want)
			}
		}
	}
}

func TestOfLeavesInputAlone(t *testing.T) {
	xs := []float64{3, 1, 2}
	if got := Of(xs, 50); got != 2 {
		t.Errorf("Of: got %g, want 2", got)
	}
	if !slices.Equal(xs, []float64{3, 1, 2}) {
		t.Errorf("Of reordered its input: %v", xs)
	}
}

func TestRank(t *testing.T) {
	for _, tc := range []struct {
		n     int64
		p     float64
		wantK int64
		wantF float64
	}{
		{1, 99, 0, 0}, {5, 99, 3, 0.96}, {4, 50, 1, 0.5}, {101, 99, 99, 0}, {10, 100, 9, 0},
	} {
		k, f := Rank(tc.n, tc.p)
		if k != tc.wantK || math.Abs(f-tc.wantF) > 1e-12 {
			t.Errorf("Rank(%d, %g): got %d, %g, want %d, %g", tc.n, tc.p, k, f, tc.wantK, tc.wantF)
		}
	}
}

func BenchmarkSorted(b *testing.B) {
	v := make([]int64, 1_000_000)
	for i := range v {
		v[i] = int64(i) * 3
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range []float64{50, 90, 95, 99} {
			_ = Sorted(v, p)
		}
	}
}
