package latency

import (
	"fmt"
	"slices"
)

// Positions in the trained-physics beta vector (docs/simulator.md §8.3; BLIS order).
const (
	BetaPrefillCompute = iota // β₁ₐ (β₁ on max(compute, kv) with < 9 betas)
	BetaDecodeCompute         // β₂ₐ (β₂ on max(compute, kv) with < 10 betas)
	BetaWeight                // β₃
	BetaTP                    // β₄: TP all-reduce
	BetaLayer                 // β₅: µs per layer
	BetaRequest               // β₆: µs per scheduled request
	BetaStep                  // β₇: µs per step
	BetaMoELayer              // β₈: µs per MoE layer (interleaved models only)
	BetaPrefillKV             // β₁ᵦ
	BetaDecodeKV              // β₂ᵦ
	BetaEP                    // β_EP: MoE dispatch/combine
	NumBetas                  // length of a full beta vector (11)
)

// DefaultPhysicsAlpha returns the reference alphas (BLIS defaults.yaml,
// "iter29"): [α₀ = Q µs, α₁ = A_end µs, α₂ = A_tok µs].
func DefaultPhysicsAlpha() []float64 { return []float64{15563.199579, 777.3455, 45.907545} }

// DefaultPhysicsBeta returns the reference betas ("iter29"), in the order of
// the Beta* constants.
func DefaultPhysicsBeta() []float64 {
	return []float64{0.152128, 0.0, 1.36252915, 0.752037, 32.09546717, 4.41684444, 126.024825, 481.8613888, 0.0, 1.94710771, 0.752037}
}

// TrainedPhysicsConfig selects the model, GPU, TP and coefficients of a
// [TrainedPhysics] model. Alpha and Beta are both nil (use the reference
// coefficients) or both given: 3 alphas and 7 to 11 betas.
type TrainedPhysicsConfig struct {
	Model *ModelConfig
	GPU   GPU
	TP    int // ≥ 1; must divide the attention heads
	Alpha []float64
	Beta  []float64
}

// TrainedPhysics is BLIS's default model (docs/simulator.md §8.3): roofline-shaped basis
// terms without MFU, each scaled by a fitted coefficient:
//
//	StepTime = β₁ₐ·T_pf_compute + β₁ᵦ·T_pf_kv + β₂ₐ·T_dc_compute + β₂ᵦ·T_dc_kv + β₃·T_weight
//	         + β₄·T_tp + β_EP·T_moe_dispatch + β₅·L + β₆·N_req + β₇ + β₈·n_MoE
//
// floored to integer µs, at least 1. With fewer than 9 betas prefill uses
// β₁·max(T_pf_compute, T_pf_kv), with fewer than 10 decode likewise uses
// β₂·max(T_dc_compute, T_dc_kv); a missing β₈ is 0 and a missing β_EP is β₄.
// Q = ⌊α₀⌋, A_end = ⌊α₁⌋, A_tok = ⌊α₂⌋ (the spec's example E2E uses
// A_end = 777 from α₁ = 777.3455).
//
// Bases, in µs, with peak FLOP/µs (FP8 peak for 1-byte weights) and HBM
// bytes/µs, T_p prefill tokens, T_d decode requests, KV at 2 bytes/element:
//
//	T_pf_compute = [T_p·cTok + L·4·(n_h/TP)·d_h·Σᵢ nᵢ(sᵢ + nᵢ/2)] / peak
//	T_dc_compute = [T_d·cTok + L·4·(n_h/TP)·d_h·Σ cⱼ] / peak
//	cTok = L·2H(2H + 2d_kv)/TP + L_dense·6H·F/TP + n_MoE·k·6H·F_moe/TP + n_MoE·6H·F_shared/TP
//	T_pf_kv = L·2·(d_kv/TP)·2·T_p / BW,  T_dc_kv = L·2·(d_kv/TP)·2·(Σ cⱼ + T_d) / BW
//	T_weight = [L·H(2H + 2d_kv)/TP + L_dense·3H·F/TP + n_MoE·(N/TP)·3H·F_moe + n_MoE·3H·F_shared/TP]·wbpp / BW
//	T_tp = (L + L_dense + n_MoE if MoE)·(T_p + T_d)·H·2 bytes·2·(TP−1)/TP / BW   (0 at TP 1)
//
// with nᵢ the new tokens and sᵢ the full prefill target of prefill request i
// and cⱼ the progress of decode request j. Data parallelism is 1 here, so the
// MoE all-reduce applies (when TP > 1) and T_moe_dispatch is 0.
//
// Layer split: the coefficients were fitted on BLIS's basis, which counts
// n_MoE = ⌊L/(s+1)⌋ MoE layers for interleave step s > 0 and all L layers
// for other MoE models; this model keeps that basis (it can differ from
// [ModelConfig.MoELayers], the architecture's own count, which the roofline
// and capacity use). β₈ applies only to interleaved models.
//
// Decode requests enter only through T_d and Σ cⱼ (attention FLOPs and KV
// reads are linear in each cⱼ; everything else counts requests), so a [Step]'s
// (count, Σcontext) summary is exact.
type TrainedPhysics struct {
	alpha        [3]float64
	beta         [NumBetas]float64
	nBeta        int  // betas as given (7 to 11)
	prefillSplit bool // ≥ 9 betas
	decodeSplit  bool // ≥ 10 betas

	layers     float64 // L
	moeLayers  float64 // n_MoE for β₈ (interleaved models only, else 0)
	cTok       float64 // FLOPs per token outside attention
	cAttn      float64 // attention FLOPs per token·context: L·4·(n_h/TP)·d_h
	flopsPerUs float64
	kvPerTokUs float64 // µs of KV traffic per token
	weightUs   float64 // T_weight
	tpPerTokUs float64 // T_tp per token
}

// NewTrainedPhysics validates its inputs and precomputes the constants.
func NewTrainedPhysics(cfg TrainedPhysicsConfig) (*TrainedPhysics, error) {
	m := cfg.Model
	if err := checkModelGPU(m, cfg.GPU, cfg.TP); err != nil {
		return nil, fmt.Errorf("trained-physics latency model: %w", err)
	}
	alpha, beta := cfg.Alpha, cfg.Beta
	switch {
	case alpha == nil && beta == nil:
		alpha, beta = DefaultPhysicsAlpha(), DefaultPhysicsBeta()
	case alpha == nil || beta == nil:
		return nil, fmt.Errorf("trained-physics latency model: alpha and beta coefficients must be given together")
	}
	if len(alpha) != 3 {
		return nil, fmt.Errorf("trained-physics latency model: want 3 alpha coefficients, got %d", len(alpha))
	}
	if len(beta) < 7 || len(beta) > NumBetas {
		return nil, fmt.Errorf("trained-physics latency model: want 7 to 11 beta coefficients, got %d", len(beta))
	}
	if err := checkCoeffs("alpha", alpha); err != nil {
		return nil, fmt.Errorf("trained-physics latency model: %w", err)
	}
	if err := checkCoeffs("beta", beta); err != nil {
		return nil, fmt.Errorf("trained-physics latency model: %w", err)
	}
	p := &TrainedPhysics{alpha: [3]float64(alpha), nBeta: len(beta), prefillSplit: len(beta) >= 9, decodeSplit: len(beta) >= 10}
	copy(p.beta[:], beta)
	if len(beta) < NumBetas {
		p.beta[BetaEP] = p.beta[BetaTP]
	}

	L, H := float64(m.Layers), float64(m.Hidden)
	nh, dh, dkv := float64(m.Heads), float64(m.HeadDim), float64(m.KVDim())
	F, Fm, Fs := float64(m.FFN), float64(m.ExpertFFN), float64(m.SharedFFN)
	tp := float64(cfg.TP)
	var lMoE float64 // BLIS basis, see the type's comment
	interleaved := m.IsMoE() && m.InterleaveMoEStep > 0
	switch {
	case interleaved:
		lMoE = float64(m.Layers / (m.InterleaveMoEStep + 1))
	case m.IsMoE():
		lMoE = L
	}
	lDense := L - lMoE
	k := float64(max(m.ExpertsPerToken, 1))
	flops := peakTFlops(cfg.GPU, m.WeightBytes) * 1e6
	bw := cfg.GPU.BwPeakTBs * 1e6
	const kvBytes, actBytes = 2.0, 2.0

	p.layers = L
	if interleaved {
		p.moeLayers = lMoE
	}
	p.cTok = L*2*H*(2*H+2*dkv)/tp + lDense*6*H*F/tp + lMoE*(k*6*H*Fm+6*H*Fs)/tp
	p.cAttn = L * 4 * (nh / tp) * dh
	p.flopsPerUs = flops
	p.kvPerTokUs = L * 2 * kvDimPerGPU(m, cfg.TP) * kvBytes / bw
	p.weightUs = (L*H*(2*H+2*dkv)/tp + lDense*3*H*F/tp + lMoE*(float64(m.Experts)/tp)*3*H*Fm + lMoE*3*H*Fs/tp) * m.WeightBytes / bw
	if cfg.TP > 1 {
		units := L + lDense
		if m.IsMoE() {
			units += lMoE // MoE all-reduce at DP 1
		}
		p.tpPerTokUs = units * H * actBytes * 2 * (tp - 1) / tp / bw
	}
	return p, nil
}

// Basis returns the step's raw basis values in µs (counts for the layer,
// request, step and MoE-layer terms), indexed by the Beta* constants. With a
// full 11-beta vector StepTime is ⌊Σ βᵢ·basisᵢ⌋ (at least 1), which is what a
// least-squares fit of the coefficients needs. An empty step has a zero basis.
func (p *TrainedPhysics) Basis(s *Step) [NumBetas]float64 {
	var b [NumBetas]float64
	var tp, attn, nReq float64 // prefill Σ nᵢ, Σ nᵢ(sᵢ + nᵢ/2), request count
	for i := range s.Prefill {
		w := &s.Prefill[i]
		if w.NewTokens <= 0 {
			continue
		}
		n := float64(w.NewTokens)
		target := float64(max(w.Target, w.Context+w.NewTokens))
		tp += n
		attn += n * (target + n/2)
		nReq++
	}
	td := float64(max(s.DecodeCount, 0))
	if tp == 0 && td == 0 {
		return b
	}
	ctx := float64(max(s.DecodeContextSum, 0))
	b[BetaPrefillCompute] = (tp*p.cTok + attn*p.cAttn) / p.flopsPerUs
	b[BetaPrefillKV] = tp * p.kvPerTokUs
	b[BetaDecodeCompute] = (td*p.cTok + ctx*p.cAttn) / p.flopsPerUs
	b[BetaDecodeKV] = (ctx + td) * p.kvPerTokUs
	b[BetaWeight] = p.weightUs
	b[BetaTP] = (tp + td) * p.tpPerTokUs
	b[BetaEP] = 0 // MoE dispatch/combine only exists at DP > 1
	b[BetaLayer] = p.layers
	b[BetaRequest] = nReq + td
	b[BetaStep] = 1
	b[BetaMoELayer] = p.moeLayers
	return b
}

// StepTime implements [Model]; see [TrainedPhysics] for the formula.
func (p *TrainedPhysics) StepTime(s *Step) int64 {
	b := p.Basis(s)
	if b[BetaStep] == 0 {
		return 1 // empty step
	}
	β := &p.beta
	var t float64
	if p.prefillSplit {
		t += β[BetaPrefillCompute]*b[BetaPrefillCompute] + β[BetaPrefillKV]*b[BetaPrefillKV]
	} else {
		t += β[BetaPrefillCompute] * max(b[BetaPrefillCompute], b[BetaPrefillKV])
	}
	if p.decodeSplit {
		t += β[BetaDecodeCompute]*b[BetaDecodeCompute] + β[BetaDecodeKV]*b[BetaDecodeKV]
	} else {
		t += β[BetaDecodeCompute] * max(b[BetaDecodeCompute], b[BetaDecodeKV])
	}
	t += β[BetaWeight]*b[BetaWeight] + β[BetaTP]*b[BetaTP] + β[BetaEP]*b[BetaEP] +
		β[BetaLayer]*b[BetaLayer] + β[BetaRequest]*b[BetaRequest] + β[BetaStep] + β[BetaMoELayer]*b[BetaMoELayer]
	return floorMicros(t, 1)
}

// QueueDelay implements [Model]: ⌊α₀⌋, independent of the prompt.
func (p *TrainedPhysics) QueueDelay(int) int64 { return floorMicros(p.alpha[0], 0) }

// TokenOverhead implements [Model]: ⌊α₂⌋.
func (p *TrainedPhysics) TokenOverhead() int64 { return floorMicros(p.alpha[2], 0) }

// EndOverhead implements [Model]: ⌊α₁⌋.
func (p *TrainedPhysics) EndOverhead() int64 { return floorMicros(p.alpha[1], 0) }

// Coefficients returns copies of the alphas and betas in effect, the betas
// as long as they were given (their length selects the max/split forms).
func (p *TrainedPhysics) Coefficients() (alpha, beta []float64) {
	return slices.Clone(p.alpha[:]), slices.Clone(p.beta[:p.nBeta])
}
