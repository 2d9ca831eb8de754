package metrics

import (
	"cmp"
	"math"
	"slices"

	"servesim/internal/des/instance"
)

// Percentile of sorted values by linear interpolation at rank p/100·(n−1)
// (Hyndman-Fan type 7, the rule of montanaflynn/stats.Percentile, which the
// tests use as the oracle). 0 for no values.
func Percentile[T uint32 | int64 | float64](sorted []T, p float64) float64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := p / 100 * float64(n-1)
	k := int(rank)
	f := rank - float64(k)
	if k+1 < n && f != 0 && sorted[k+1] != sorted[k] {
		return float64(sorted[k]) + f*float64(sorted[k+1]-sorted[k])
	}
	return float64(sorted[k])
}

// MergeHistograms merges sorted histograms into one sorted histogram.
func MergeHistograms(hs ...[]instance.ValueCount) []instance.ValueCount {
	var all []instance.ValueCount
	for _, h := range hs {
		all = append(all, h...)
	}
	slices.SortFunc(all, func(a, b instance.ValueCount) int { return cmp.Compare(a.Value, b.Value) })
	out := all[:0]
	for _, vc := range all {
		if len(out) > 0 && out[len(out)-1].Value == vc.Value {
			out[len(out)-1].Count += vc.Count
			continue
		}
		out = append(out, vc)
	}
	return out
}

// HistPercentile is Percentile over the samples a sorted histogram holds,
// without expanding it.
func HistPercentile(h []instance.ValueCount, p float64) float64 {
	var n int64
	for _, vc := range h {
		n += vc.Count
	}
	if n == 0 {
		return 0
	}
	rank := p / 100 * float64(n-1)
	k := int64(rank)
	f := rank - float64(k)
	lo, hi := at(h, k), at(h, min(k+1, n-1))
	if f != 0 && lo != hi {
		return float64(lo) + f*float64(hi-lo)
	}
	return float64(lo)
}

// at is the k-th smallest sample (0-based).
func at(h []instance.ValueCount, k int64) int64 {
	for _, vc := range h {
		if k < vc.Count {
			return vc.Value
		}
		k -= vc.Count
	}
	return h[len(h)-1].Value
}

// HistMean is the mean of a histogram's samples (0 if empty).
func HistMean(h []instance.ValueCount) float64 {
	var n int64
	var s float64
	for _, vc := range h {
		n += vc.Count
		s += float64(vc.Value) * float64(vc.Count)
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// Jain is (Σx)² / (n·Σx²), 1 when every x is 0 or there are none.
func Jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 || len(xs) == 0 || math.IsNaN(s2) {
		return 1
	}
	return s * s / (float64(len(xs)) * s2)
}
