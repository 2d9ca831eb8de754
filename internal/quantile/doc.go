// Package quantile holds the one percentile rule of the project: every
// percentile a command prints or a test asserts (the simulator's summary,
// calibrate's comparisons, observe's results) is computed here.
//
// The rule is linear interpolation between the closest ranks (Hyndman & Fan
// type 7, NumPy's default "linear" method, R's default, Excel's
// PERCENTILE.INC). For percent p in [0, 100] and n values sorted ascending,
// x₀ ≤ … ≤ xₙ₋₁:
//
//	rank = p/100 · (n − 1),  k = ⌊rank⌋,  f = rank − k
//	P(p) = x_k + f · (x_{k+1} − x_k)        (x_k when f = 0 or x_{k+1} = x_k)
//
// so P(0) is the minimum, P(100) the maximum, P(50) the median (the mean of
// the two middle values when n is even), and a single value is every
// percentile. Conventions: no values give 0; a NaN among the values gives
// NaN; when x_{k+1} − x_k overflows to +Inf the endpoints are weighted
// apart, (1 − f)·x_k + f·x_{k+1}, so large finite values stay finite.
//
// Why this rule: it is what vLLM's own benchmark reports (np.percentile with
// its default method), so a percentile of a trace we record, of a simulated
// run, and of vLLM's benchmark output over the same latencies agree; it is
// continuous in p and needs no choice of rounding, unlike nearest rank. It
// is also the rule of montanaflynn/stats.Percentile (v0.14.0), which the
// tests use as the oracle. The rule lives here rather than in that library
// because the simulator needs it without copying: on sorted integer columns
// and on (value, count) histograms, where the library takes a float64 slice
// and sorts a copy on every call.
//
// The package is a leaf: it knows nothing of what the values measure.
package quantile
