package report

import (
	"math"

	"github.com/montanaflynn/stats"

	"servesim/internal/quantile"
)

// The statistics of calibrate's comparison. Percentiles follow the project's
// one rule (package quantile: linear interpolation between closest ranks,
// NumPy's default); means, deviations and Pearson's r come from
// montanaflynn/stats v0.14.0. TestPercentileRuleGolden locks the figures.

// Percentile returns the p-th percentile (0 < p ≤ 100) of xs, in any order,
// by quantile's rule; 0 for an empty slice or a p outside that range. A
// single value is every percentile.
func Percentile(xs []float64, p float64) float64 {
	if !(p > 0 && p <= 100) {
		return 0
	}
	return quantile.Of(xs, p)
}

// Mean returns the arithmetic mean of xs; 0 for an empty slice.
func Mean(xs []float64) float64 {
	v, err := stats.Mean(xs)
	if err != nil {
		return 0
	}
	return v
}

// StdDev returns the population standard deviation of xs (NumPy's default,
// ddof 0); 0 for an empty slice.
func StdDev(xs []float64) float64 {
	v, err := stats.StandardDeviationPopulation(xs)
	if err != nil {
		return 0
	}
	return v
}

// MAPE returns the mean of |rᵢ − sᵢ| / rᵢ over pairs with rᵢ ≠ 0 and both values
// finite, as a fraction, and the number of pairs used.
func MAPE(real, sim []float64) (mape float64, n int) {
	terms := make([]float64, 0, len(real))
	for i := range real {
		if !qualifies(real[i], sim[i]) {
			continue
		}
		terms = append(terms, math.Abs(real[i]-sim[i])/real[i])
	}
	if len(terms) == 0 {
		return 0, 0
	}
	return Mean(terms), len(terms)
}

func qualifies(r, s float64) bool {
	return r != 0 && isFinite(r) && isFinite(s)
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Bias directions (docs/calibrate.md §6).
const (
	BiasOver    = "over-predict"
	BiasUnder   = "under-predict"
	BiasNeutral = "neutral"
)

// Bias returns the sign of Σ(sᵢ − rᵢ) over the pairs MAPE uses: BiasOver, BiasUnder,
// BiasNeutral, or "" when no pair qualifies.
func Bias(real, sim []float64) string {
	sum, n := 0.0, 0
	for i := range real {
		if !qualifies(real[i], sim[i]) {
			continue
		}
		sum += sim[i] - real[i]
		n++
	}
	switch {
	case n == 0:
		return ""
	case sum > 0:
		return BiasOver
	case sum < 0:
		return BiasUnder
	}
	return BiasNeutral
}

// Pearson returns Pearson's r over all pairs; 0 when n < 3 or either side is
// constant (the spec's zero denominator). montanaflynn computes it as covariance
// over the product of standard deviations on values scaled by a power of two,
// which equals the spec's sum formula without its cancellation at large µs values.
func Pearson(real, sim []float64) float64 {
	if len(real) < 3 || len(real) != len(sim) {
		return 0
	}
	r, err := stats.Pearson(real, sim)
	if err != nil || !isFinite(r) {
		return 0
	}
	return r
}

// Quality grades, best first (docs/calibrate.md §7).
const (
	GradeExcellent = "excellent"
	GradeGood      = "good"
	GradeFair      = "fair"
	GradePoor      = "poor"
)

// gradeRank orders the grades: poor 0 < fair 1 < good 2 < excellent 3; -1 unknown.
func gradeRank(g string) int {
	switch g {
	case GradePoor:
		return 0
	case GradeFair:
		return 1
	case GradeGood:
		return 2
	case GradeExcellent:
		return 3
	}
	return -1
}

// Grade maps MAPE and Pearson r to a quality grade; first match wins, strict
// inequalities: excellent MAPE < 0.10 and r > 0.95; good < 0.20 and > 0.85; fair
// < 0.35 and > 0.70; else poor.
func Grade(mape, r float64) string {
	switch {
	case mape < 0.10 && r > 0.95:
		return GradeExcellent
	case mape < 0.20 && r > 0.85:
		return GradeGood
	case mape < 0.35 && r > 0.70:
		return GradeFair
	}
	return GradePoor
}

// WorkloadLevel compares the two sides' distributions (BLIS key names).
type WorkloadLevel struct {
	RealMean           float64 `json:"real_mean"`
	SimMean            float64 `json:"sim_mean"`
	MeanError          float64 `json:"mean_error"`
	MeanPercentError   float64 `json:"mean_percent_error"`
	RealMedian         float64 `json:"real_median"`
	SimMedian          float64 `json:"sim_median"`
	MedianError        float64 `json:"median_error"`
	MedianPercentError float64 `json:"median_percent_error"`
	RealP50            float64 `json:"real_p50"`
	SimP50             float64 `json:"sim_p50"`
	P50Error           float64 `json:"p50_error"`
	P50PercentError    float64 `json:"p50_percent_error"`
	RealP90            float64 `json:"real_p90"`
	SimP90             float64 `json:"sim_p90"`
	P90Error           float64 `json:"p90_error"`
	P90PercentError    float64 `json:"p90_percent_error"`
	RealP95            float64 `json:"real_p95"`
	SimP95             float64 `json:"sim_p95"`
	P95Error           float64 `json:"p95_error"`
	P95PercentError    float64 `json:"p95_percent_error"`
	RealP99            float64 `json:"real_p99"`
	SimP99             float64 `json:"sim_p99"`
	P99Error           float64 `json:"p99_error"`
	P99PercentError    float64 `json:"p99_percent_error"`
}

// RequestLevel judges per-request prediction.
type RequestLevel struct {
	MAPE          float64 `json:"mape"`
	PearsonR      float64 `json:"pearson_r"`
	BiasDirection string  `json:"bias_direction"`
	Quality       string  `json:"quality"`
}

// Comparison is one metric's comparison (docs/calibrate.md §10 `metrics.<name>`).
type Comparison struct {
	WorkloadLevel WorkloadLevel `json:"workload_level"`
	RequestLevel  RequestLevel  `json:"request_level"`
	Count         int           `json:"count"`
}

// errPair returns sim − real and |sim − real| / real (0 when real ≤ 0).
func errPair(real, sim float64) (e, pct float64) {
	e = sim - real
	if real > 0 {
		pct = math.Abs(e) / real
	}
	return e, pct
}

// comparePairs computes the statistics of one metric over n pairs (n ≥ 1;
// for n = 0 it returns the zero Comparison with grade poor).
func comparePairs(p *pairs) Comparison {
	real, sim := p.real, p.sim
	c := Comparison{Count: len(real)}
	if len(real) == 0 || len(real) != len(sim) {
		c.RequestLevel.Quality = GradePoor
		return c
	}
	// Sorted once: the percentiles below read the sorted columns in place,
	// which matters at a million pairs.
	rs, ss := p.sorted()
	w := &c.WorkloadLevel
	w.RealMean, w.SimMean = Mean(real), Mean(sim)
	w.MeanError, w.MeanPercentError = errPair(w.RealMean, w.SimMean)
	w.RealP50, w.SimP50 = quantile.Sorted(rs, 50), quantile.Sorted(ss, 50)
	w.P50Error, w.P50PercentError = errPair(w.RealP50, w.SimP50)
	w.RealMedian, w.SimMedian = w.RealP50, w.SimP50
	w.MedianError, w.MedianPercentError = w.P50Error, w.P50PercentError
	w.RealP90, w.SimP90 = quantile.Sorted(rs, 90), quantile.Sorted(ss, 90)
	w.P90Error, w.P90PercentError = errPair(w.RealP90, w.SimP90)
	w.RealP95, w.SimP95 = quantile.Sorted(rs, 95), quantile.Sorted(ss, 95)
	w.P95Error, w.P95PercentError = errPair(w.RealP95, w.SimP95)
	w.RealP99, w.SimP99 = quantile.Sorted(rs, 99), quantile.Sorted(ss, 99)
	w.P99Error, w.P99PercentError = errPair(w.RealP99, w.SimP99)

	q := &c.RequestLevel
	q.MAPE, _ = MAPE(real, sim)
	q.PearsonR = Pearson(real, sim)
	q.BiasDirection = Bias(real, sim)
	q.Quality = Grade(q.MAPE, q.PearsonR)
	return c
}
