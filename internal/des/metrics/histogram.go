package metrics

import (
	"cmp"
	"slices"

	"servesim/internal/des/instance"
	"servesim/internal/quantile"
)

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

// HistPercentile is the p-th percentile (quantile's rule) of the samples a
// sorted histogram holds, without expanding it.
func HistPercentile(h []instance.ValueCount, p float64) float64 {
	var n int64
	for _, vc := range h {
		n += vc.Count
	}
	if n == 0 {
		return 0
	}
	k, f := quantile.Rank(n, p)
	return quantile.Between(at(h, k), at(h, min(k+1, n-1)), f)
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
