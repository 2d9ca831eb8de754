package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortedCopyMatchesSort: the radix sorts order like slices.Sort for
// short and long inputs, negative values, extremes and repeated values;
// sortedCopy leaves its input untouched, radixSort32 sorts its own (the
// same values cut to 32 bits).
func TestSortedCopyMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := rng.IntN(3000)
		if trial < 10 {
			n = trial
		}
		v := make([]int64, n)
		for i := range v {
			switch trial % 4 {
			case 0:
				v[i] = rng.Int64N(1 << 27) // µs latencies
			case 1:
				v[i] = rng.Int64() - math.MaxInt64/2 // both signs
			case 2:
				v[i] = int64(rng.IntN(5)) // many repeats
			default:
				v[i] = []int64{math.MinInt64, math.MaxInt64, 0, -1, 1}[rng.IntN(5)]
			}
		}
		in := slices.Clone(v)
		got := sortedCopy(v)
		want := slices.Clone(v)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n=%d): radix order differs from slices.Sort", trial, n)
		}
		if !slices.Equal(v, in) {
			t.Fatalf("trial %d: input modified", trial)
		}
		u := make([]uint32, n)
		for i, x := range v {
			u[i] = uint32(x)
		}
		want32 := slices.Sorted(slices.Values(u))
		if radixSort32(u); !slices.Equal(u, want32) {
			t.Fatalf("trial %d (n=%d): 32-bit radix order differs from slices.Sort", trial, n)
		}
	}
}
