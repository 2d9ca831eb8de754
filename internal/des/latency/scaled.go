package latency

import (
	"fmt"
	"math"
)

// DefaultStepTimeSigma is the relative uncertainty σ of the physics model's
// step time on a GPU and model it was not fitted on: a step of the real
// server takes the predicted time × (1 + ε), ε ~ N(0, σ), with one ε for a
// whole run (a systematic error of the coefficients, not noise per step).
// It is calibrate fit's rule (√(π/2) × the larger of the TTFT and E2E
// MAPE, over all the requests and over those of each load regime, the
// largest) applied to the physics defaults replayed on the four real vLLM
// runs of internal/fidelity, two GPUs and three models nobody fitted them
// to: TTFT MAPE 12.5% and E2E 6.0% over all 1,200 requests, and the
// light-load TTFTs, 115 requests, 15.1%, so σ = 0.19 (its test
// recomputes it). The
// steps alone err less (six real H100 steps of Qwen3-14B within −5% to
// +4%, TestPhysicsStepsOnH100), but an interval must hold the requests'
// latencies, and TTFT carries what a step-time scale alone does not
// (queueing amplifies it; fixed costs do not scale). docs/simulator.md
// (intervals) says how sweeps use it.
const DefaultStepTimeSigma = 0.19

// DefaultSigmaOf is the documented σ of a model kind with no fitted one:
// DefaultStepTimeSigma for physics; for the other kinds, whose step times
// have no step-level check in this repository (BLIS's models are measured
// 27–91% off in E2E on real runs), a wider 20%.
func DefaultSigmaOf(k Kind) float64 {
	if k == KindPhysics || k == "" {
		return DefaultStepTimeSigma
	}
	return 0.20
}

// MaxStepTimeSigma bounds σ: at 1.645σ (a 90% interval) the low scale
// 1 − 1.645σ stays above 0.17, a step time still positive.
const MaxStepTimeSigma = 0.5

// Scaled is a Model whose step times are another's times a factor: the
// step-time scale of an interval (a run at 1 ± zσ). Queueing and token
// overheads are the inner model's, unscaled: σ is the uncertainty of the
// engine's steps.
type Scaled struct {
	inner  Model
	factor float64
}

// NewScaled wraps m so that every StepTime is m's times factor (> 0).
// A factor of exactly 1 returns m itself.
func NewScaled(m Model, factor float64) (Model, error) {
	if !(factor > 0) || math.IsInf(factor, 0) {
		return nil, fmt.Errorf("step-time scale %g must be a positive number", factor)
	}
	if factor == 1 {
		return m, nil
	}
	return &Scaled{inner: m, factor: factor}, nil
}

// StepTime is the inner step time × the factor, at least 1 µs. Scaling
// keeps every model linear in the decodes' context, as a Step needs.
func (s *Scaled) StepTime(st *Step) int64 {
	return floorMicros(float64(s.inner.StepTime(st))*s.factor, 1)
}

// QueueDelay is the inner model's.
func (s *Scaled) QueueDelay(promptTokens int) int64 { return s.inner.QueueDelay(promptTokens) }

// TokenOverhead is the inner model's.
func (s *Scaled) TokenOverhead() int64 { return s.inner.TokenOverhead() }

// EndOverhead is the inner model's.
func (s *Scaled) EndOverhead() int64 { return s.inner.EndOverhead() }
