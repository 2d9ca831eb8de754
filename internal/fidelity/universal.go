package fidelity

import (
	"fmt"

	"servesim/internal/des/latency"
	"servesim/internal/fit"
)

// Universal holds the coefficients that a kernel profile cannot give and
// that are fitted on measured runs: host time the GPU does not hide, the
// inter-GPU link, and the engine's output overheads. They are shared by all
// deployments of one software stack (here vLLM 0.19 on the bench's hosts),
// which is what lets a fit on some runs predict another.
type Universal struct {
	HostStepUs   float64 // per step, µs
	HostSeqUs    float64 // per scheduled request, µs
	EagerLayerUs float64 // per layer of a step outside a CUDA graph, µs (latency.PhEagerLayerUs)
	// LinkInv is the inverse of the share of the interconnect's bandwidth
	// an all-reduce reaches (1/link_eff; at least 1).
	LinkInv  float64
	LinkOpUs float64 // per collective, µs
	TokenUs  float64 // A_tok, µs
	EndUs    float64 // A_end, µs
}

// DefaultUniversal is the starting point of a fit: some host time per
// step, links at PCIe-like speed.
func DefaultUniversal() Universal {
	return Universal{HostStepUs: 500, LinkInv: 2, LinkOpUs: 20}
}

func (u Universal) vector() []float64 {
	return []float64{u.HostStepUs, u.HostSeqUs, u.EagerLayerUs, u.LinkInv, u.LinkOpUs}
}

func (u Universal) withVector(v []float64) Universal {
	u.HostStepUs, u.HostSeqUs, u.EagerLayerUs, u.LinkInv, u.LinkOpUs = v[0], v[1], v[2], v[3], v[4]
	return u
}

// Coefficients are the latency coefficients of one deployment: its GPU
// fit plus the universal terms. Q (α₀) is 0: the runs' clocks start where
// the engine queued each request (see [Case]).
func Coefficients(k *fit.KernelFit, u Universal) (alpha, beta []float64, err error) {
	if len(k.Beta) != latency.PhNumBetas {
		return nil, nil, fmt.Errorf("fidelity: GPU fit has %d coefficients, want %d", len(k.Beta), latency.PhNumBetas)
	}
	beta = append([]float64(nil), k.Beta...)
	beta[latency.PhStepUs] = u.HostStepUs
	beta[latency.PhSeqUs] += u.HostSeqUs
	beta[latency.PhEagerLayerUs] = u.EagerLayerUs
	lo, hi := latency.PhysicsBounds(latency.PhLinkEff)
	beta[latency.PhLinkEff] = min(hi, max(lo, 1/max(u.LinkInv, 1)))
	beta[latency.PhLinkOpUs] = u.LinkOpUs
	alpha = []float64{0, u.EndUs, u.TokenUs}
	return alpha, beta, nil
}

// universalBasis extracts the step's values of the fitted universal terms
// (in universalNames order); all 0 for an empty step. A step bound by its
// launches (launchBound, at the replay's coefficients) takes its per-layer
// cost there, and its GPU work, links included, hides behind them.
func universalBasis(q *latency.PhysicsStep, launchBound bool, dst []float64) {
	clear(dst[:nu])
	if q.Empty {
		return
	}
	dst[0] = 1
	dst[1] = q.Seqs
	dst[2] = q.EagerLayers
	if launchBound {
		dst[2] += q.LaunchLayers
		return
	}
	dst[3] = q.Link
	dst[4] = q.LinkOps
}
