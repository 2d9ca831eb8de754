package metrics

import (
	"math"

	"servesim/internal/quantile"
)

// column keeps one latency (µs) per completed request, for exact means
// and percentiles: 4 bytes a value while every value lies in [0, 2³²) µs
// (71 minutes), 8 bytes once one does not. At a million requests the
// summary's columns were most of a run's memory.
type column struct {
	narrow []uint32 // every value, while all fit
	wide   []int64  // every value, once one did not fit (narrow is then nil)
}

func (c *column) add(v int64) {
	if c.wide == nil {
		if v >= 0 && v <= math.MaxUint32 {
			c.narrow = append(c.narrow, uint32(v))
			return
		}
		c.wide = make([]int64, len(c.narrow), max(2*len(c.narrow), 16))
		for i, x := range c.narrow {
			c.wide[i] = int64(x)
		}
		c.narrow = nil
	}
	c.wide = append(c.wide, v)
}

// clone returns a copy.
func (c *column) clone() column {
	return column{narrow: append([]uint32(nil), c.narrow...), wide: append([]int64(nil), c.wide...)}
}

// sort orders the values ascending, in place: the column is a multiset, so
// a later add or sort sees the same values.
func (c *column) sort() {
	if c.wide != nil {
		c.wide = sortedCopy(c.wide)
		return
	}
	radixSort32(c.narrow)
}

// percentile is the p-th percentile of the sorted column.
func (c *column) percentile(p float64) float64 {
	if c.wide != nil {
		return quantile.Sorted(c.wide, p)
	}
	return quantile.Sorted(c.narrow, p)
}

// mean sums the values in the column's order (sorted, the summary's).
func (c *column) mean() float64 {
	if c.wide != nil {
		return meanInt(c.wide)
	}
	return meanInt(c.narrow)
}

func meanInt[T uint32 | int64](v []T) float64 {
	if len(v) == 0 {
		return 0
	}
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s / float64(len(v))
}
