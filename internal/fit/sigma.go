package fit

import (
	"math"
	"strconv"

	"servesim/internal/des/latency"
)

// StepTimeSigma is the step-time uncertainty σ a fitted deployment file
// records (its step_time_sigma key, which sweep and replay --interval
// read): the fit's residual spread in E2E, the latency that is a sum of
// step times, so that its relative error is the steps' (TTFT's amplifies
// it near saturation, which the interval's runs reproduce themselves).
// For relative errors ε ~ N(0, σ) the MAPE is σ·√(2/π), so σ = √(π/2) ×
// the E2E MAPE of the held-out requests, or of the fitted ones without a
// holdout. The fit has no load regimes: σ is one figure over its requests.
// It is bounded to latency.MaxStepTimeSigma and kept to 3 significant
// digits; 0 (no request compared) leaves the model's default.
func StepTimeSigma(res *Result) float64 {
	e := res.Fit
	if res.Holdout.N > 0 {
		e = res.Holdout
	}
	if e.N == 0 || !(e.E2EMAPE > 0) || math.IsInf(e.E2EMAPE, 0) {
		return 0
	}
	s := min(math.Sqrt(math.Pi/2)*e.E2EMAPE, latency.MaxStepTimeSigma)
	s, _ = strconv.ParseFloat(strconv.FormatFloat(s, 'g', 3, 64), 64)
	return s
}
