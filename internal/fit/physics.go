package fit

import (
	"fmt"
	"slices"

	"servesim/internal/des/latency"
)

// The free betas of the physics model, in θ order: the shares of the
// GPU's peak FLOP/s and bandwidth its GEMMs and reads reach. Shares enter
// a step's time as their inverse (1/η multiplies the time at peak), so θ
// holds the inverse shares, which the step time is linear in once the
// branch of each GEMM's knee is known (the larger of weight read and FLOP
// time, at the coefficients of the replay that logged the step).
//
// Everything else keeps its starting value: per-request latencies cannot
// tell the fixed costs from the shares. A decode step's weight read and
// its per-step cost are one constant for one model, so a free step cost
// trades against the bandwidth share along a line the data leave flat;
// where in a long prefill step a request arrived (its phase) blurs the
// costs of prefill steps (the eager per-layer cost, attention) by more
// than their size. Measured on synthetic light, loaded and saturated
// traces together: the two shares come back within 1%, a freed step cost
// 35% off (TestFitAllRecoversPhysics).
// Kernel profiles measure those terms directly (internal/fidelity).
func physicsFree() []int {
	return []int{latency.PhFlopsEff, latency.PhBwEff}
}

// physicsFixed are the fixed costs freed beside the shares when the fit
// has several traces: loads that differ hold different shares of steps
// that pay the per-layer cost of running outside a CUDA graph, which tells
// it from the shares. The per-step cost stays held: a decode step's
// weight read and its per-step cost are one constant at every load, and
// freed it drifts to 3 times its truth while the bandwidth share moves 6%
// (measured on the traces of TestFitAllRecoversPhysics). On an L40S, where
// every step that prefills pays the per-layer cost, a truth of 150 µs
// against a start of 80 comes back at 165 and the shares within 0.4%;
// held, the FLOP/s share ends 1.5% off (TestFitFreesEagerCost). Where the
// steps hide their launches behind the GPU's work (an H100's steps beyond
// the captured size), the data cannot see the cost and it stays near its
// start.
func physicsFixed() []int {
	return []int{latency.PhEagerLayerUs}
}

// physicsFreeList is the free betas in θ order: the shares, then the
// fixed costs when they are free.
func (sp *space) physicsFreeList() []int {
	if sp.freeFixed {
		return append(physicsFree(), physicsFixed()...)
	}
	return physicsFree()
}

// physicsShare reports whether beta position i is a share (fitted as its
// inverse).
func physicsShare(i int) bool {
	switch i {
	case latency.PhFlopsEff, latency.PhBwEff, latency.PhAttnEff, latency.PhKVEff, latency.PhLinkEff:
		return true
	}
	return false
}

// Positions of the physics features in θ.
const (
	phUFl = iota
	phUBw
	phNumFree
)

// physicsTheta is θ's beta part at the starting coefficients.
func physicsTheta(beta []float64, dst []float64, free []int) {
	for j, i := range free {
		v := beta[i]
		if physicsShare(i) {
			v = 1 / v
		}
		dst[j] = v
	}
}

// physicsCoefficients turns θ's beta part into a full beta vector, within
// the model's physical bounds.
func physicsCoefficients(start, theta []float64, free []int) []float64 {
	beta := slices.Clone(start)
	for j, i := range free {
		lo, hi := latency.PhysicsBounds(i)
		v := theta[j]
		if physicsShare(i) {
			if v <= 0 {
				v = hi
			} else {
				v = 1 / v
			}
		}
		beta[i] = min(hi, max(lo, v))
	}
	return beta
}

// physicsFeatures fills dst[:nb] with the step's features at the
// coefficients of cur (which decide each knee's branch, and whether a step
// launched without a CUDA graph is bound by its launches) and returns the
// part of its time no free parameter scales.
func (sp *space) physicsFeatures(s *latency.Step, dst []float64) (offset float64) {
	clear(dst[:sp.nb])
	q := sp.physics.Quantities(s)
	if q.Empty {
		return 1 // an empty step lasts 1 µs
	}
	b := sp.beta
	ub, uf, k := sp.cur[phUBw], sp.cur[phUFl], b[latency.PhKnee]
	gemm := func(w, f float64) {
		if w*ub >= f*uf {
			dst[phUBw] += w
			dst[phUFl] += k * f
		} else {
			dst[phUFl] += f
			dst[phUBw] += k * w
		}
	}
	gemm(q.DenseW, q.DenseF)
	gemm(q.LMW, q.LMF)
	if q.ExpertW > 0 || q.ExpertF > 0 {
		gemm(q.ExpertW, q.ExpertF)
	}
	dst[phUBw] += q.Elem
	gpu := latency.GPUFixed(&q, b)
	eagerLayers, eager := q.EagerLayers, b[latency.PhEagerLayerUs]
	if sp.freeFixed {
		eager = sp.cur[phNumFree]
	}
	if q.LaunchLayers > 0 && q.LaunchLayers*(b[latency.PhLayerUs]+eager) > gpu+dst[phUBw]*ub+dst[phUFl]*uf {
		// The host's launches outlast the GPU's work: the shares do not
		// show in this step.
		dst[phUBw], dst[phUFl] = 0, 0
		gpu = q.LaunchLayers * b[latency.PhLayerUs]
		eagerLayers += q.LaunchLayers
	}
	if sp.freeFixed {
		dst[phNumFree] = eagerLayers
	} else {
		offset = eagerLayers * eager
	}
	return offset + gpu + b[latency.PhStepUs] + q.PrefillSeq*b[latency.PhPrefillSeqUs] + q.Seqs*b[latency.PhSeqUs]
}

// Bound is a fitted coefficient that ended on a bound of its physical range.
type Bound struct {
	Name   string
	Value  float64
	Lower  bool // the lower bound, else the upper
	Lo, Hi float64
}

func (b Bound) String() string {
	side := "upper"
	if b.Lower {
		side = "lower"
	}
	return fmt.Sprintf("%s ended on its %s bound (%g, range [%g, %g]): the data ask for more than the physics allows; the model misses something here rather than the coefficient being that",
		b.Name, side, b.Value, b.Lo, b.Hi)
}

// onBoundTolerance is how close to a bound (relative to the range) a
// fitted coefficient counts as on it.
const onBoundTolerance = 1e-3

// physicsOnBound are the free physics coefficients of beta that sit on a
// bound of their range.
func physicsOnBound(beta []float64) []Bound {
	var out []Bound
	names := latency.PhysicsBetaNames()
	for _, i := range physicsFree() {
		lo, hi := latency.PhysicsBounds(i)
		tol := onBoundTolerance * (hi - lo)
		switch v := beta[i]; {
		case v <= lo+tol:
			out = append(out, Bound{Name: names[i], Value: v, Lower: true, Lo: lo, Hi: hi})
		case v >= hi-tol:
			out = append(out, Bound{Name: names[i], Value: v, Lo: lo, Hi: hi})
		}
	}
	return out
}
