package noise

import (
	"fmt"
	"math"

	"github.com/montanaflynn/stats"
)

// Level is the confidence level of every interval of this package.
const Level = 0.95

// EnoughHalfWidth is the rule that says N was enough: the 95% interval's
// half-width is at most this share of the mean's magnitude (5%), so the
// mean of the repeats is known to about ±5%. With fewer than two repeats
// no interval exists and N is never enough.
const EnoughHalfWidth = 0.05

// Estimate is what N repeats of one measurement say of it. The interval
// is mean ± t(0.975, N−1)·SD/√N, SD the sample standard deviation (N−1 in
// its denominator). CIHalfWidthPct and CV are relative to |Mean|; they are
// absent (nil) when the mean is 0 and the repeats differ, which makes
// them unbounded. With one repeat only N and Mean are set.
type Estimate struct {
	N              int      `json:"n"`
	Mean           float64  `json:"mean"`
	SD             float64  `json:"sd"`
	CILo           float64  `json:"ci95_lo"`
	CIHi           float64  `json:"ci95_hi"`
	CIHalfWidthPct *float64 `json:"ci95_half_width_pct,omitempty"` // 100 × half-width / |mean|
	CV             *float64 `json:"cv,omitempty"`                  // SD / |mean|
	Enough         bool     `json:"enough"`                        // half-width ≤ EnoughHalfWidth × |mean|
}

// Of is the estimate of the repeats' values xs (in repeat order; NaN and
// infinite values are the caller's to leave out). Of(nil) is the zero
// Estimate.
func Of(xs []float64) Estimate {
	e := Estimate{N: len(xs)}
	if e.N == 0 {
		return e
	}
	e.Mean, _ = stats.Mean(xs)
	e.CILo, e.CIHi = e.Mean, e.Mean
	if e.N < 2 {
		return e
	}
	e.SD, _ = stats.StandardDeviationSample(xs)
	half := TQuantile(1-(1-Level)/2, float64(e.N-1)) * e.SD / math.Sqrt(float64(e.N))
	e.CILo, e.CIHi = e.Mean-half, e.Mean+half
	switch m := math.Abs(e.Mean); {
	case m > 0:
		pct, cv := 100*half/m, e.SD/m
		e.CIHalfWidthPct, e.CV = &pct, &cv
		e.Enough = half <= EnoughHalfWidth*m
	case e.SD == 0: // every repeat measured exactly 0
		zero, zeroCV := 0.0, 0.0
		e.CIHalfWidthPct, e.CV, e.Enough = &zero, &zeroCV, true
	}
	return e
}

// HalfWidth is the interval's half-width (0 with fewer than two repeats).
func (e Estimate) HalfWidth() float64 { return (e.CIHi - e.CILo) / 2 }

// Text states the estimate in one phrase, values by format (a fmt verb
// such as "%.2f"): "12.31 ± 0.40 (95% CI 11.91–12.71, CV 2.6%)".
func (e Estimate) Text(format string) string {
	v := func(x float64) string { return fmt.Sprintf(format, x) }
	if e.N < 2 {
		return v(e.Mean) + " (one run: no interval)"
	}
	cv := "CV unbounded"
	if e.CV != nil {
		cv = fmt.Sprintf("CV %.1f%%", 100**e.CV)
	}
	return fmt.Sprintf("%s ± %s (95%% CI %s–%s, %s)", v(e.Mean), v(e.HalfWidth()), v(e.CILo), v(e.CIHi), cv)
}

// maxNeeded bounds Needed: beyond it the answer is "far more runs".
const maxNeeded = 10000

// Needed is about how many repeats would meet EnoughHalfWidth at the
// spread measured: the smallest n with t(0.975, n−1)·SD/√n ≤
// EnoughHalfWidth·|mean|, the SD taken as the repeats measured it (at
// most maxNeeded). 0 when the repeats say nothing of it: fewer than two,
// or a mean of 0.
func (e Estimate) Needed() int {
	m := math.Abs(e.Mean)
	if e.N < 2 || m == 0 {
		return 0
	}
	for n := 2; n <= maxNeeded; n++ {
		if TQuantile(1-(1-Level)/2, float64(n-1))*e.SD/math.Sqrt(float64(n)) <= EnoughHalfWidth*m {
			return n
		}
	}
	return maxNeeded
}
