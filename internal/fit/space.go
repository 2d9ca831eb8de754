package fit

import (
	"fmt"
	"slices"

	"servesim/internal/des/latency"
)

// space maps a latency model's coefficients to the free parameters θ of the
// fit and each step to its features, so that StepTime = θ_β·features +
// offset. θ holds the free betas first, then the three alphas.
type space struct {
	kind  latency.Kind
	nb    int // free betas
	alpha [3]float64
	beta  []float64 // starting betas, as the model takes them

	phys   *latency.TrainedPhysics // trained-physics basis (nil for blackbox)
	constW [latency.NumBetas]float64

	physics *latency.Physics // physics quantities (nil for the other kinds)
	// freeFixed frees the physics model's per-step and eager per-layer
	// costs beside its shares (physicsFixed).
	freeFixed bool
	// cur is θ's beta part at which the replay being recorded runs: it
	// decides the branch of each GEMM's knee and whether a step without a
	// CUDA graph is bound by its launches (physics).
	cur []float64
}

// The free betas of trained-physics, in θ order: the token and request
// terms, then the scale of the tied per-step constants.
func physFree() []int {
	return []int{latency.BetaPrefillCompute, latency.BetaPrefillKV, latency.BetaDecodeCompute, latency.BetaDecodeKV, latency.BetaRequest}
}

// physConst are the per-step constants scaled together.
func physConst() []int {
	return []int{latency.BetaWeight, latency.BetaLayer, latency.BetaStep, latency.BetaMoELayer}
}

// newSpace builds the parameter space of model m with its starting
// coefficients.
func newSpace(kind latency.Kind, m latency.Model, alpha, beta []float64, freeFixed bool) (*space, error) {
	sp := &space{kind: kind, beta: slices.Clone(beta), freeFixed: freeFixed && kind == latency.KindPhysics}
	if len(alpha) != 3 {
		return nil, fmt.Errorf("fit: want 3 alpha coefficients, got %d", len(alpha))
	}
	sp.alpha = [3]float64(alpha)
	switch kind {
	case latency.KindBlackbox:
		if len(beta) != 3 {
			return nil, fmt.Errorf("fit: blackbox: want 3 beta coefficients, got %d", len(beta))
		}
		sp.nb = 3
	case latency.KindTrainedPhysics:
		p, ok := m.(*latency.TrainedPhysics)
		if !ok {
			return nil, fmt.Errorf("fit: trained-physics: the deployment's latency model is a %T", m)
		}
		sp.phys = p
		// The fit writes all 11 betas (split prefill and decode terms).
		full := make([]float64, latency.NumBetas)
		copy(full, beta)
		if len(beta) < latency.NumBetas {
			full[latency.BetaEP] = full[latency.BetaTP]
		}
		sp.beta = full
		sum := 0.0
		for _, k := range physConst() {
			sp.constW[k] = full[k]
			sum += full[k]
		}
		if sum == 0 { // nothing to keep the ratios of: fit the per-step constant alone
			sp.constW[latency.BetaStep] = 1
		}
		sp.nb = len(physFree()) + 1
	case latency.KindPhysics:
		p, ok := m.(*latency.Physics)
		if !ok {
			return nil, fmt.Errorf("fit: physics: the deployment's latency model is a %T", m)
		}
		if len(beta) != latency.PhNumBetas {
			return nil, fmt.Errorf("fit: physics: want %d beta coefficients, got %d", latency.PhNumBetas, len(beta))
		}
		sp.physics, sp.nb = p, len(sp.physicsFreeList())
		free := sp.physicsFreeList()
		sp.cur = make([]float64, len(free))
		physicsTheta(sp.beta, sp.cur, free)
	default:
		return nil, fmt.Errorf("fit: latency model %q has no coefficients to fit (want physics, blackbox or trained-physics)", kind)
	}
	return sp, nil
}

// at makes θ the coefficients of the next replay recorded.
func (sp *space) at(theta []float64) {
	if sp.cur != nil {
		copy(sp.cur, theta[:sp.nb])
	}
}

// maxAlphaUs bounds a freed physics alpha (Q, A_end, A_tok): 0.1 s is far
// above what a server spends outside its steps per request or token.
const maxAlphaUs = 100_000

// params is the number of free parameters.
func (sp *space) params() int { return sp.nb + 3 }

// features fills dst[:nb] with the step's features and returns the part of
// its time that no free parameter scales.
func (sp *space) features(s *latency.Step, dst []float64) (offset float64) {
	clear(dst[:sp.nb])
	if sp.kind == latency.KindPhysics {
		return sp.physicsFeatures(s, dst)
	}
	if sp.kind == latency.KindBlackbox {
		var p int64
		for i := range s.Prefill {
			if n := s.Prefill[i].NewTokens; n > 0 {
				p += int64(n)
			}
		}
		d := max(s.DecodeCount, 0)
		if p == 0 && d == 0 {
			return 1 // an empty step lasts 1 µs
		}
		dst[0], dst[1], dst[2] = 1, float64(p), float64(d)
		return 0
	}
	b := sp.phys.Basis(s)
	if b[latency.BetaStep] == 0 {
		return 1
	}
	for i, k := range physFree() {
		dst[i] = b[k]
	}
	c := 0.0
	for _, k := range physConst() {
		c += sp.constW[k] * b[k]
	}
	dst[sp.nb-1] = c
	return sp.beta[latency.BetaTP]*b[latency.BetaTP] + sp.beta[latency.BetaEP]*b[latency.BetaEP]
}

// The alpha features of the two equations of a request (see doc.go), for a
// prompt of the given length and out output tokens.
func (sp *space) ttftAlpha(prompt int, dst []float64) {
	a := dst[sp.nb:]
	if sp.kind == latency.KindBlackbox { // Q = α₀ + α₁·prompt, A_tok = α₂
		a[0], a[1], a[2] = 1, float64(prompt), 1
		return
	}
	a[0], a[1], a[2] = 1, 0, 1 // Q = α₀, A_end = α₁, A_tok = α₂
}

func (sp *space) decodeAlpha(out int, dst []float64) {
	a := dst[sp.nb:]
	if sp.kind == latency.KindBlackbox {
		a[0], a[1], a[2] = 0, 0, float64(out-1)
		return
	}
	a[0], a[1], a[2] = 0, 1, float64(out-1)
}

// theta is θ at the starting coefficients.
func (sp *space) theta() []float64 {
	t := make([]float64, sp.params())
	switch sp.kind {
	case latency.KindPhysics:
		physicsTheta(sp.beta, t, sp.physicsFreeList())
	case latency.KindBlackbox:
		copy(t, sp.beta)
	default:
		for i, k := range physFree() {
			t[i] = sp.beta[k]
		}
		t[sp.nb-1] = 1 // the tied constants at their starting values
		if sp.constW[latency.BetaStep] == 1 && sp.beta[latency.BetaStep] == 0 {
			t[sp.nb-1] = 0
		}
	}
	copy(t[sp.nb:], sp.alpha[:])
	return t
}

// coefficients turns θ into the model's alpha and beta vectors.
func (sp *space) coefficients(theta []float64) (alpha, beta []float64) {
	alpha = slices.Clone(theta[sp.nb:])
	if sp.kind == latency.KindPhysics {
		for i := range alpha {
			alpha[i] = min(max(alpha[i], 0), maxAlphaUs)
		}
		return alpha, physicsCoefficients(sp.beta, theta[:sp.nb], sp.physicsFreeList())
	}
	if sp.kind == latency.KindBlackbox {
		return alpha, slices.Clone(theta[:3])
	}
	beta = slices.Clone(sp.beta)
	for i, k := range physFree() {
		beta[k] = theta[i]
	}
	for _, k := range physConst() {
		beta[k] = theta[sp.nb-1] * sp.constW[k]
	}
	return alpha, beta
}
