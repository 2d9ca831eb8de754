package fit

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"servesim/internal/des/latency"
	"servesim/internal/nnls"
)

// StepsFit is a physics model fitted to measured engine steps.
type StepsFit struct {
	Beta          []float64 // the full beta vector: the fitted terms and the start's others
	Steps         int       // steps fitted
	Before, After float64   // RMS relative error of the step times at the start and fitted
}

// stepFitPasses bounds the solves: each fixes the branch of every GEMM
// (weight read or FLOP time, whichever is longer) at the last solve's
// shares, and the branches settle within a few.
const stepFitPasses = 8

// FitSteps fits the physics model m (its coefficients start at beta) to
// measured engine steps: steps[i] took realUs[i] µs. A step's time is
// linear in the inverse shares of peak FLOP/s and bandwidth and in the
// eager per-layer cost once each GEMM's branch is known (and whether a
// step without a CUDA graph is bound by its launches or by the GPU), so
// each pass is one non-negative least-squares solve on relative error, and
// the passes stop when the branches (and so the solution) stop moving. Unlike the
// per-request fit, nothing here is blurred by queueing or by where in a
// step a request arrived: a step time is what the model predicts.
func FitSteps(m *latency.Physics, beta []float64, steps []latency.Step, realUs []float64) (*StepsFit, error) {
	if len(steps) != len(realUs) {
		return nil, fmt.Errorf("fit steps: %d steps, %d times", len(steps), len(realUs))
	}
	sp, err := newSpace(latency.KindPhysics, m, []float64{0, 0, 0}, beta, true)
	if err != nil {
		return nil, err
	}
	var idx []int
	for i, y := range realUs {
		if y > 0 && !math.IsInf(y, 0) {
			idx = append(idx, i)
		}
	}
	if len(idx) < sp.nb+1 {
		return nil, fmt.Errorf("fit steps: %d steps with a time, want at least %d", len(idx), sp.nb+1)
	}
	theta := sp.theta()[:sp.nb]
	res := &StepsFit{Steps: len(idx), Before: stepRMS(sp, theta, steps, realUs, idx)}
	a := make([]float64, sp.nb)
	for pass := 0; pass < stepFitPasses; pass++ {
		sp.at(theta)
		p, err := nnls.New(sp.nb)
		if err != nil {
			return nil, err
		}
		for _, i := range idx {
			off := sp.features(&steps[i], a)
			y := realUs[i]
			p.Add(a, y-off, 1/(y*y))
		}
		next, err := p.Solve(nnls.Options{Prior: theta, Ridge: 1e-6})
		if err != nil {
			return nil, fmt.Errorf("fit steps: %w", err)
		}
		moved := 0.0
		for j := range next {
			moved = math.Max(moved, math.Abs(next[j]-theta[j])/math.Max(math.Abs(theta[j]), 1e-9))
		}
		theta = next
		if moved < 1e-6 {
			break
		}
	}
	if slices.ContainsFunc(theta, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }) {
		return nil, errors.New("fit steps: the solve did not converge")
	}
	res.Beta = physicsCoefficients(sp.beta, theta, sp.physicsFreeList())
	res.After = stepRMS(sp, theta, steps, realUs, idx)
	return res, nil
}

// stepRMS is the RMS relative error of the steps idx at θ.
func stepRMS(sp *space, theta []float64, steps []latency.Step, realUs []float64, idx []int) float64 {
	sp.at(theta)
	a := make([]float64, sp.nb)
	s := 0.0
	for _, i := range idx {
		off := sp.features(&steps[i], a)
		pred := off
		for j := range a {
			pred += a[j] * theta[j]
		}
		e := pred/realUs[i] - 1
		s += e * e
	}
	return math.Sqrt(s / float64(len(idx)))
}
