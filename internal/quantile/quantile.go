package quantile

import (
	"math"
	"slices"
)

// Number is a value type the rule applies to: the simulator's compact µs
// columns (uint32, int64) and measured or derived figures (float64).
type Number interface {
	~uint32 | ~int64 | ~float64
}

// Rank splits the rank of percent p among n ≥ 1 sorted values into its
// whole part k (0-based, the lower closest value) and its fraction f in
// [0, 1): rank = p/100·(n − 1). p must be in [0, 100].
func Rank(n int64, p float64) (k int64, f float64) {
	rank := p / 100 * float64(n-1)
	k = int64(rank)
	return k, rank - float64(k)
}

// Between interpolates the fraction f of the way from lo to hi (lo ≤ hi, the
// values at ranks k and k+1): lo when f is 0 or the two are equal.
func Between[T Number](lo, hi T, f float64) float64 {
	if f == 0 || lo == hi {
		return float64(lo)
	}
	d := float64(hi - lo)
	if math.IsInf(d, 1) {
		return (1-f)*float64(lo) + f*float64(hi)
	}
	return float64(lo) + f*d
}

// Sorted is the p-th percentile (p in [0, 100]) of values sorted ascending
// as slices.Sort orders them (NaNs first): 0 for none, NaN if any is NaN.
func Sorted[T Number](sorted []T, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	if lo := sorted[0]; lo != lo { // NaN, which sorts first
		return float64(lo)
	}
	k, f := Rank(int64(n), p)
	lo, hi := sorted[k], sorted[k]
	if int(k)+1 < n {
		hi = sorted[k+1]
	}
	return Between(lo, hi, f)
}

// Of is the p-th percentile (p in [0, 100]) of xs in any order, which it
// leaves as they are (it sorts a copy): 0 for none, NaN if any is NaN.
func Of(xs []float64, p float64) float64 {
	if len(xs) <= 1 {
		return Sorted(xs, p)
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Sorted(s, p)
}
