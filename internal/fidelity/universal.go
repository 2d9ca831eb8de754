package fidelity

import (
	"fmt"

	"servesim/internal/des/latency"
)

// Universal holds the coefficients that a kernel profile cannot give and
// that are fitted on measured runs: host time the GPU does not hide, the
// inter-GPU link, and the engine's output overheads. They are shared by all
// deployments of one software stack (here vLLM 0.19 on the bench's hosts),
// which is what lets a fit on some runs predict another.
type Universal struct {
	HostStepUs    float64 // per step, µs
	HostSeqUs     float64 // per scheduled request, µs
	HostPrefillUs float64 // per prefill request in the step, µs
	// LinkBytes multiplies collective traffic expressed in HBM time: the
	// ratio of HBM to link bandwidth (about 1 on NVLink, tens on PCIe).
	LinkBytes float64
	LinkOpUs  float64 // per collective, µs
	TokenUs   float64 // A_tok, µs
	EndUs     float64 // A_end, µs
}

// DefaultUniversal is the starting point of a fit: some host time per
// step, links at PCIe-like speed.
func DefaultUniversal() Universal {
	return Universal{HostStepUs: 500, LinkBytes: 50, LinkOpUs: 20}
}

// universalNames names the fitted linear terms, in the order of their
// vector form.
func universalNames() []string {
	return []string{"host_step_us", "host_seq_us", "host_prefill_us", "link_bytes", "link_op_us"}
}

func (u Universal) vector() []float64 {
	return []float64{u.HostStepUs, u.HostSeqUs, u.HostPrefillUs, u.LinkBytes, u.LinkOpUs}
}

func (u Universal) withVector(v []float64) Universal {
	u.HostStepUs, u.HostSeqUs, u.HostPrefillUs, u.LinkBytes, u.LinkOpUs = v[0], v[1], v[2], v[3], v[4]
	return u
}

// Topology says how the deployment's collectives relate to the model's
// count (n_coll all-reduces of the step's tokens, the TP layout). A
// data-parallel expert-parallel deployment folded into one instance at
// TP = DP does one all-gather and one reduce-scatter of all ranks' tokens
// per MoE layer: the traffic of one all-reduce (half the folded count,
// which also counts an attention all-reduce) in two collectives (as many
// as the folded count).
type Topology struct {
	LinkBytes float64 // multiplies the link-bytes coefficient
	LinkOps   float64 // multiplies the per-collective coefficient
}

// TopologyOf returns the topology factors of a run's deployment.
func TopologyOf(r *Run, mc *latency.ModelConfig) Topology {
	if r.Meta.DataParallel > 1 && mc.IsMoE() && r.Meta.ExpertParallel {
		return Topology{LinkBytes: 0.5, LinkOps: 1}
	}
	return Topology{LinkBytes: 1, LinkOps: 1}
}

// Coefficients are the latency coefficients of one deployment: its kernel
// fit plus the universal terms through its topology. Q (α₀) is 0: the wait
// that vLLM's asynchronous scheduling adds before a new request's first
// step is modelled by where its times are counted from (see [Case]), not
// by a fixed delay.
func Coefficients(k *KernelFit, u Universal, t Topology) (alpha, beta []float64, err error) {
	if len(k.Beta) != latency.KPNumBetas {
		return nil, nil, fmt.Errorf("fidelity: kernel fit has %d coefficients, want %d", len(k.Beta), latency.KPNumBetas)
	}
	beta = append([]float64(nil), k.Beta...)
	beta[latency.KPHostStep] = u.HostStepUs
	beta[latency.KPHostSeq] = u.HostSeqUs
	beta[latency.KPHostPrefillSeq] = u.HostPrefillUs
	beta[latency.KPLinkBytes] = u.LinkBytes * t.LinkBytes
	beta[latency.KPLinkOps] = u.LinkOpUs * t.LinkOps
	alpha = []float64{0, u.EndUs, u.TokenUs}
	return alpha, beta, nil
}

// universalBasis extracts the step's values of the fitted universal terms
// (in universalNames order), with the topology applied.
func universalBasis(b *latency.KernelBasis, t Topology, dst []float64) {
	dst[0] = b[latency.KPHostStep]
	dst[1] = b[latency.KPHostSeq]
	dst[2] = b[latency.KPHostPrefillSeq]
	dst[3] = b[latency.KPLinkBytes] * t.LinkBytes
	dst[4] = b[latency.KPLinkOps] * t.LinkOps
}
