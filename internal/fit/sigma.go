package fit

import (
	"math"
	"strconv"

	"servesim/internal/des/latency"
)

// StepTimeSigma is the step-time uncertainty σ a fitted deployment file
// records (its step_time_sigma key, which sweep and replay --interval
// read): the fit's residual spread, as a relative error of the steps. The
// interval scales every step by one σ, while the steps err unevenly: E2E,
// a sum of mostly decode steps, measures the decode steps' error, and a
// TTFT away from saturation its prefill and mixed steps', which err more
// (on the held-out real runs of internal/fidelity, TTFT MAPE 5.7% against
// E2E 1.9%: a σ from E2E alone left 31% of the TTFTs outside their 90%
// intervals, 62% at light load). σ is therefore taken from the larger of the two MAPEs, so
// both latencies' intervals hold at least their share. For relative
// errors ε ~ N(0, σ) the MAPE is σ·√(2/π), so σ = √(π/2) × that MAPE, of
// the held-out requests, or of the fitted ones without a holdout. The fit
// has no load regimes: σ is one figure over its requests. It is bounded to
// latency.MaxStepTimeSigma and kept to 3 significant digits; 0 (no request
// compared) leaves the model's default.
func StepTimeSigma(res *Result) float64 {
	e := res.Fit
	if res.Holdout.N > 0 {
		e = res.Holdout
	}
	m := max(e.E2EMAPE, e.TTFTMAPE)
	if e.N == 0 || !(m > 0) || math.IsInf(m, 0) {
		return 0
	}
	s := min(math.Sqrt(math.Pi/2)*m, latency.MaxStepTimeSigma)
	s, _ = strconv.ParseFloat(strconv.FormatFloat(s, 'g', 3, 64), 64)
	return s
}
