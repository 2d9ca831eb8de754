package fit

import (
	"fmt"
	"math"
	"strconv"

	"servesim/internal/des/latency"
)

// StepTimeSigma is the step-time uncertainty σ a fitted deployment file
// records (its step_time_sigma key, which sweep and replay --interval
// read): the fit's residual spread, as a relative error of the steps.
//
//   - Per set of requests, σ = √(π/2) × the larger of their E2E and TTFT
//     MAPE (for relative errors ε ~ N(0, σ) the MAPE is σ·√(2/π)). The
//     interval scales every step by one σ while the steps err unevenly:
//     E2E, a sum of mostly decode steps, measures the decode steps' error,
//     a TTFT away from saturation its prefill and mixed steps', which err
//     more (on the held-out real runs of internal/fidelity, TTFT MAPE 5.7%
//     against E2E 2.0%: a σ from E2E alone left 31% of the TTFTs outside
//     their 90% intervals, 62% at light load).
//   - By load: the rule is taken over all the requests and over those of
//     each load regime the replay met (Errors.ByLoad) with at least
//     minLoadRequests of them, and σ is the largest, so that the interval
//     holds its share in every regime. Pooled, the saturated requests,
//     usually the most, set σ, and light-load TTFTs, which err most, fell
//     outside their intervals (on the held-out real runs of
//     internal/fidelity 83.8% inside at light load and 83.3% at the knee;
//     by load 90.2% and 96.4%, with σ 10–17.6% where it was 5.5–8%).
//
// The requests are the held-out ones, or the fitted ones without a
// holdout. σ is bounded to latency.MaxStepTimeSigma and kept to 3
// significant digits; 0 (no request compared) leaves the model's default.
func StepTimeSigma(res *Result) float64 {
	e := res.Fit
	if res.Holdout.N > 0 {
		e = res.Holdout
	}
	s := sigmaOf(e)
	for _, g := range Regimes() {
		if l := e.ByLoad[g]; l.N >= minLoadRequests {
			s = max(s, sigmaOf(l))
		}
	}
	if s == 0 {
		return 0
	}
	s, _ = strconv.ParseFloat(strconv.FormatFloat(min(s, latency.MaxStepTimeSigma), 'g', 3, 64), 64)
	return s
}

// minLoadRequests: a load regime with fewer requests than this says too
// little of the error to widen every interval by it.
const minLoadRequests = 30

// sigmaOf is √(π/2) × the larger of e's E2E and TTFT MAPE, unbounded; 0
// when e compared nothing.
func sigmaOf(e Errors) float64 {
	m := max(e.E2EMAPE, e.TTFTMAPE)
	if e.N == 0 || !(m > 0) || math.IsInf(m, 0) {
		return 0
	}
	return math.Sqrt(math.Pi/2) * m
}

// sigmaComment says where step_time_sigma comes from, e.g.
// "step_time_sigma 0.12 = √(π/2) × the larger of TTFT and E2E MAPE, the
// largest over all 800 fitted requests (0.111) and by load: light 45
// requests 0.068, knee 620 0.12, saturated 135 0.0823." A load with too
// few requests is marked as not counted; "" when nothing was compared.
func sigmaComment(res *Result) string {
	e, set := res.Fit, "fitted"
	if res.Holdout.N > 0 {
		e, set = res.Holdout, "held-out"
	}
	s := StepTimeSigma(res)
	if s == 0 {
		return ""
	}
	verb := "="
	if s == latency.MaxStepTimeSigma {
		verb = "(the bound) ≤"
	}
	c := fmt.Sprintf("step_time_sigma %.3g %s √(π/2) × the larger of TTFT and E2E MAPE, the largest over all %d %s requests (%.3g)", s, verb, e.N, set, sigmaOf(e))
	sep := "\nand by load:"
	for _, g := range Regimes() {
		l, ok := e.ByLoad[g]
		if !ok || l.N == 0 {
			continue
		}
		c += fmt.Sprintf("%s %s %d requests %.3g", sep, g, l.N, sigmaOf(l))
		if l.N < minLoadRequests {
			c += fmt.Sprintf(" (under %d, not counted)", minLoadRequests)
		}
		sep = ","
	}
	return c + "."
}
