package latency

import (
	"fmt"
	"math"
	"slices"
)

// KindKernelPhysics selects [KernelPhysics].
const KindKernelPhysics Kind = "kernel-physics"

// Positions in the kernel-physics beta vector. The first group is GPU kernel
// time (fitted from kernel measurements, e.g. a layerwise profile), the
// second inter-GPU communication, the third host (CPU) time that the GPU
// does not hide (fitted from traces).
const (
	KPStep           = iota // per-step constant (embedding, final norm, launch gaps), µs
	KPGemmWeight            // dense GEMM weight read W_g/BW
	KPGemmCompute           // dense GEMM FLOPs T·F_g/peak (= W_g/BW·x, x = T/T*)
	KPGemmKnee1             // W_g/BW·max(0, x − 1/2): the roofline knee, smoothed
	KPGemmKnee2             // W_g/BW·max(0, x − 1)
	KPGemmKnee3             // W_g/BW·max(0, x − 2)
	KPTokenLayer            // element-wise traffic L·T·H·a/BW (norms, activation, rotary, residual)
	KPAttnLayer             // per-layer attention constant, L
	KPPrefillFlops          // prefill attention FLOPs L·4·(n_h/TP)·d_h·Σ nᵢ(cᵢ + nᵢ/2)/peak
	KPPrefillSeq            // per prefill sequence and layer, L·P_n
	KPDecodeKV              // decode KV read L·2·(d_kv/TP)·a·Σ cⱼ/BW
	KPDecodeSeq             // per decode sequence and layer, L·D
	KPMixedKV               // the decode KV read again when the step also prefills (one varlen kernel)
	KPMixedKVWide           // the same times D/256: mixed batches slow down with their width
	KPMoEWeight             // expert weights read n_MoE·n_eff(T)/TP·3·H·F_moe·w/BW
	KPMoECompute            // expert FLOPs n_MoE·T·k·6·H·F_moe/TP/peak
	KPMoELayer              // per MoE layer constant (router, fused kernel), n_MoE
	KPLMHeadWeight          // LM head weight read V·H·w/TP/BW
	KPLMHeadCompute         // LM head FLOPs S·2·V·H/TP/peak over the S sampled sequences
	KPSampleSeq             // sampler, per sampled sequence S
	KPLinkBytes             // collective traffic n_coll·T·H·a·2(TP−1)/TP/BW (0 at TP 1)
	KPLinkOps               // collectives per step n_coll (0 at TP 1)
	KPHostStep              // host time per step not hidden by the GPU, µs
	KPHostSeq               // host time per scheduled request, N
	KPHostPrefillSeq        // host time per prefill request in the step, P_n
	KPNumBetas              // length of a kernel-physics beta vector (25)
)

// KernelPhysicsBetaNames returns the short names of the beta positions (for
// reports and YAML comments), in order.
func KernelPhysicsBetaNames() []string {
	return []string{"step", "gemm_weight", "gemm_compute", "gemm_knee_half", "gemm_knee_1", "gemm_knee_2",
		"token_layer", "attn_layer", "prefill_flops", "prefill_seq", "decode_kv", "decode_seq", "mixed_kv", "mixed_kv_wide",
		"moe_weight", "moe_compute", "moe_layer", "lm_head_weight", "lm_head_compute", "sample_seq",
		"link_bytes", "link_ops", "host_step", "host_seq", "host_prefill_seq"}
}

// DefaultKernelPhysicsBeta is the ideal roofline: every kernel at the GPU's
// data-sheet peak (GEMMs at max(weight read, FLOPs)), collectives at HBM
// speed, no overheads. Real deployments fit their own coefficients.
func DefaultKernelPhysicsBeta() []float64 {
	b := make([]float64, KPNumBetas)
	for _, i := range []int{KPGemmWeight, KPGemmKnee2, KPTokenLayer, KPPrefillFlops, KPDecodeKV,
		KPMoEWeight, KPMoECompute, KPLMHeadWeight, KPLMHeadCompute, KPLinkBytes} {
		b[i] = 1
	}
	return b
}

// KernelPhysicsConfig selects the model, GPU, TP and coefficients of a
// [KernelPhysics] model: Alpha and Beta both nil (the ideal roofline, no
// overheads) or 3 alphas and [KPNumBetas] betas.
type KernelPhysicsConfig struct {
	Model *ModelConfig
	GPU   GPU
	TP    int
	Alpha []float64
	Beta  []float64
}

// KernelPhysics is a physics-basis model whose terms follow the kernels of a
// vLLM step, one coefficient each (see the KP* positions):
//
//	StepTime = Σₖ βₖ·bₖ(step), floored to integer µs, at least 1
//
// Every basis is computed per GPU from the model config, the GPU's peak
// FLOP/µs (FP8 for 1-byte weights) and bandwidth in bytes/µs, and TP. Per step,
// with T the new tokens, D the decode requests, P_n the prefill requests, N =
// D + P_n, S the requests that sample a token (decodes and prefills whose
// chunk reaches their target), cⱼ a decode request's context and nᵢ, cᵢ a
// prefill's new tokens and context before the step:
//
//   - dense GEMMs (attention projections, dense FFNs, shared experts) read
//     W_g bytes of weights and do F_g FLOPs per token. On their own they run
//     at max(W_g/BW, T·F_g/peak), a roofline with its knee at T* =
//     W_g·peak/(F_g·BW) tokens; measured GEMMs bend smoothly around it, so
//     the time is a piecewise-linear function of x = T/T* with joints at
//     x = 1/2, 1, 2 (bases KPGemmWeight … KPGemmKnee3);
//   - attention: prefill FLOPs of the causal block (the term that grows with
//     context), per-sequence costs, and decode KV reads Σ cⱼ (linear in each
//     context, so a decode step's (count, Σcontext) summary is exact). When
//     a step mixes prefill and decode, vLLM runs both in one variable-length
//     kernel that reads the decodes' KV far less efficiently than a
//     decode-only step (measured: 1.6 to 4 times slower, the more so the
//     more decodes): KPMixedKV and KPMixedKVWide add Σ cⱼ and Σ cⱼ·D/256
//     in such steps. This is the interference of chunked prefill with
//     decode;
//   - MoE layers read the weights of the n_eff(T) = N_e(1 − (1 − k/N_e)^T)
//     experts the step's tokens are expected to touch and do k expert FFNs
//     per token;
//   - the LM head reads its weights once and multiplies S rows; the sampler
//     costs per sampled sequence;
//   - at TP > 1, n_coll = L + L_dense + n_MoE all-reduces of T·H activations;
//     the bytes are over HBM bandwidth, so their coefficient is the ratio of
//     HBM to link speed (about 1 on NVLink, tens on PCIe);
//   - host time the GPU does not hide (scheduling, input preparation,
//     output processing): per step, per scheduled and per prefill request.
//
// Q = ⌊α₀⌋, A_end = ⌊α₁⌋, A_tok = ⌊α₂⌋ as for [TrainedPhysics].
type KernelPhysics struct {
	alpha [3]float64
	beta  [KPNumBetas]float64

	layers, moeLayers float64
	gemmUs            float64 // W_g/BW
	kneeTok           float64 // T*
	tokLayerUs        float64 // per token: L·H·a/BW
	attnFlopsUs       float64 // per unit of Σ n(c + n/2): L·4·(n_h/TP)·d_h/peak
	kvUs              float64 // per context token: L·2·(d_kv/TP)·a/BW
	experts, topK     float64
	expertUs          float64 // per expert touched: n_MoE/TP·3·H·F_moe·w/BW
	expertFlopsUs     float64 // per token: n_MoE·k·6·H·F_moe/TP/peak
	lmWeightUs        float64
	lmRowUs           float64 // per sampled sequence: 2·V·H/TP/peak
	linkTokUs         float64 // per token: n_coll·H·a·2(TP−1)/TP/BW
	linkOps           float64
}

// NewKernelPhysics validates its inputs and precomputes the constants.
func NewKernelPhysics(cfg KernelPhysicsConfig) (*KernelPhysics, error) {
	m := cfg.Model
	if err := checkModelGPU(m, cfg.GPU, cfg.TP); err != nil {
		return nil, fmt.Errorf("kernel-physics latency model: %w", err)
	}
	alpha, beta := cfg.Alpha, cfg.Beta
	switch {
	case alpha == nil && beta == nil:
		alpha, beta = make([]float64, 3), DefaultKernelPhysicsBeta()
	case alpha == nil || beta == nil:
		return nil, fmt.Errorf("kernel-physics latency model: alpha and beta coefficients must be given together")
	}
	if len(alpha) != 3 {
		return nil, fmt.Errorf("kernel-physics latency model: want 3 alpha coefficients, got %d", len(alpha))
	}
	if len(beta) != KPNumBetas {
		return nil, fmt.Errorf("kernel-physics latency model: want %d beta coefficients, got %d", KPNumBetas, len(beta))
	}
	if err := checkCoeffs("alpha", alpha); err != nil {
		return nil, fmt.Errorf("kernel-physics latency model: %w", err)
	}
	if err := checkCoeffs("beta", beta); err != nil {
		return nil, fmt.Errorf("kernel-physics latency model: %w", err)
	}
	k := &KernelPhysics{alpha: [3]float64(alpha), beta: [KPNumBetas]float64(beta)}

	L, H := float64(m.Layers), float64(m.Hidden)
	nh, dh, dkv := float64(m.Heads), float64(m.HeadDim), float64(m.KVDim())
	tp := float64(cfg.TP)
	w, a := m.WeightBytes, m.DtypeBytes
	peak := peakTFlops(cfg.GPU, w) * 1e6 // FLOP/µs
	bw := cfg.GPU.BwPeakTBs * 1e6        // bytes/µs
	lMoE := float64(m.MoELayers)
	lDense := L - lMoE
	// Dense GEMM parameters per GPU: q, k, v and o projections in every
	// layer, SwiGLU FFNs in dense layers, shared experts in MoE layers.
	params := L*H*(nh*dh+2*dkv+nh*dh)/tp + lDense*3*H*float64(m.FFN)/tp + lMoE*3*H*float64(m.SharedFFN)/tp
	k.layers, k.moeLayers = L, lMoE
	k.gemmUs = params * w / bw
	k.kneeTok = (params * w / bw) / (2 * params / peak) // weight-read time over FLOP time per token
	k.tokLayerUs = L * H * a / bw
	k.attnFlopsUs = L * 4 * (nh / tp) * dh / peak
	if m.IsMLA() {
		k.kvUs = L * float64(m.KVLoraRank+m.QKRopeHeadDim) * a / bw
	} else {
		k.kvUs = L * 2 * kvDimPerGPU(m, cfg.TP) * a / bw
	}
	if m.IsMoE() {
		k.experts, k.topK = float64(m.Experts), float64(m.ExpertsPerToken)
		k.expertUs = lMoE / tp * 3 * H * float64(m.ExpertFFN) * w / bw
		k.expertFlopsUs = lMoE * k.topK * 6 * H * float64(m.ExpertFFN) / tp / peak
	}
	vocab := float64(m.Vocab)
	k.lmWeightUs = vocab * H * w / tp / bw
	k.lmRowUs = 2 * vocab * H / tp / peak
	if cfg.TP > 1 {
		k.linkOps = L + lDense
		if m.IsMoE() {
			k.linkOps += lMoE
		}
		k.linkTokUs = k.linkOps * H * a * 2 * (tp - 1) / tp / bw
	}
	return k, nil
}

// KernelBasis holds one step's basis values, indexed by the KP* constants.
type KernelBasis [KPNumBetas]float64

// Basis returns the step's basis values (µs, or counts for the per-step,
// per-layer, per-sequence and per-collective terms). StepTime is
// ⌊Σ βₖ·basisₖ⌋, at least 1; an empty step has a zero basis.
func (k *KernelPhysics) Basis(s *Step) KernelBasis {
	var b KernelBasis
	var tpf, attn, npf, sample float64
	for i := range s.Prefill {
		w := &s.Prefill[i]
		if w.NewTokens <= 0 {
			continue
		}
		n, c := float64(w.NewTokens), float64(max(w.Context, 0))
		tpf += n
		attn += n * (c + n/2)
		npf++
		if w.Context+w.NewTokens >= w.Target {
			sample++
		}
	}
	d := float64(max(s.DecodeCount, 0))
	if tpf == 0 && d == 0 {
		return b
	}
	ctx := float64(max(s.DecodeContextSum, 0))
	t := tpf + d
	sample += d
	x := t / k.kneeTok
	b[KPStep] = 1
	b[KPGemmWeight] = k.gemmUs
	b[KPGemmCompute] = k.gemmUs * x
	b[KPGemmKnee1] = k.gemmUs * max(0, x-0.5)
	b[KPGemmKnee2] = k.gemmUs * max(0, x-1)
	b[KPGemmKnee3] = k.gemmUs * max(0, x-2)
	b[KPTokenLayer] = k.tokLayerUs * t
	b[KPAttnLayer] = k.layers
	b[KPPrefillFlops] = k.attnFlopsUs * attn
	b[KPPrefillSeq] = k.layers * npf
	b[KPDecodeKV] = k.kvUs * ctx
	b[KPDecodeSeq] = k.layers * d
	if npf > 0 {
		b[KPMixedKV] = k.kvUs * ctx
		b[KPMixedKVWide] = k.kvUs * ctx * d / 256
	}
	if k.experts > 0 {
		b[KPMoEWeight], b[KPMoECompute] = k.MoEBasis(t, k.experts*(1-math.Pow(1-k.topK/k.experts, t)))
		b[KPMoELayer] = k.moeLayers
	}
	b[KPLMHeadWeight] = k.lmWeightUs
	b[KPLMHeadCompute] = k.lmRowUs * sample
	b[KPSampleSeq] = sample
	b[KPLinkBytes] = k.linkTokUs * t
	b[KPLinkOps] = k.linkOps
	b[KPHostStep] = 1
	b[KPHostSeq] = npf + d
	b[KPHostPrefillSeq] = npf
	return b
}

// MoEBasis returns the expert-weight and expert-compute basis values of a
// step whose tokens touch the given number of distinct experts (in a step,
// the expected n_eff(tokens); a profile of forced routing names it). Both
// are 0 for dense models.
func (k *KernelPhysics) MoEBasis(tokens, touched float64) (weight, compute float64) {
	if k.experts == 0 {
		return 0, 0
	}
	return k.expertUs * touched, k.expertFlopsUs * tokens
}

// StepTime implements [Model]; see [KernelPhysics] for the formula.
func (k *KernelPhysics) StepTime(s *Step) int64 {
	b := k.Basis(s)
	if b[KPStep] == 0 {
		return 1 // empty step
	}
	var t float64
	for i, v := range b {
		t += k.beta[i] * v
	}
	return floorMicros(t, 1)
}

// QueueDelay implements [Model]: ⌊α₀⌋.
func (k *KernelPhysics) QueueDelay(int) int64 { return floorMicros(k.alpha[0], 0) }

// TokenOverhead implements [Model]: ⌊α₂⌋.
func (k *KernelPhysics) TokenOverhead() int64 { return floorMicros(k.alpha[2], 0) }

// EndOverhead implements [Model]: ⌊α₁⌋.
func (k *KernelPhysics) EndOverhead() int64 { return floorMicros(k.alpha[1], 0) }

// Coefficients returns copies of the alphas and betas in effect.
func (k *KernelPhysics) Coefficients() (alpha, beta []float64) {
	return slices.Clone(k.alpha[:]), slices.Clone(k.beta[:])
}
