package latency

import (
	"fmt"
	"math"
)

// RooflineConfig selects the model, GPU and tensor-parallel degree of a
// [Roofline] model.
type RooflineConfig struct {
	Model *ModelConfig
	GPU   GPU // needs MfuPrefill and MfuDecode > 0
	TP    int // ≥ 1; must divide the number of attention heads
}

// Roofline is the analytic model of docs/simulator.md §8.2: a step takes as long as the
// slower of its compute (FLOPs at an MFU-derated peak) and its memory traffic
// (weights once per step plus KV reads/writes and activations) over HBM
// bandwidth, both split evenly over TP GPUs. It has no overheads:
// Q = A_tok = A_end = 0.
//
// For a request with context c (progress before the step) and t new tokens,
// with t·c_eff = t·c + t(t−1)/2 (c_eff = c + (t−1)/2 for t > 1, c for t = 1):
//
//	FLOPs = t·aTok + t·c_eff·aCtx
//	aTok  = L·[2(H² + 2H·d_kv) + 2H² + 2H] + L_dense·4H·F + L_moe·(4H·F_moe·k + 4H·F_shared)
//	aCtx  = L·(4·n_h·d_h + 5·n_h)
//	bytes = t·(2L·d_kv·bpp + L·H·bpp) + c·2L·d_kv·bpp          (per TP: d_kv/TP)
//	weights = [L·(H(H + 2d_kv) + H²) + L_dense·2H·F + L_moe·(2H·F_moe·n_eff + 2H·F_shared)]·wbpp
//	n_eff = N·(1 − ((N − k)/N)^X), X = prefill tokens + decode requests
//
// compute = Σ_prefill FLOPs/(TP·peak·mfuPrefill) + Σ_decode FLOPs/(TP·peak·mfuDecode),
// memory = (weights/TP + Σ bytes)/BW, StepTime = max(1, ⌊max(compute, memory)⌋) µs.
// peak is the FP8 peak when weights take 1 byte and the GPU has one.
//
// The FFN counts two matrices (spec); shared experts, which the spec leaves
// out, are counted as an always-active dense FFN of their total width.
// Dense and MoE layers follow the model's own layer pattern
// ([ModelConfig.MoELayers]).
//
// Decode requests have t = 1, so their FLOPs are aTok + c·aCtx and their
// bytes (2L·d_kv·bpp + L·H·bpp) + c·2L·d_kv·bpp: both linear in c, and n_eff
// depends only on the count. Σ over decode requests therefore needs only
// their count and Σc, which is what [Step] carries.
type Roofline struct {
	aTok, aCtx       float64 // FLOPs per token, per token·context
	pfFlopsPerUs     float64 // TP·peak·mfuPrefill in FLOP/µs
	dcFlopsPerUs     float64 // TP·peak·mfuDecode in FLOP/µs
	bytesPerUs       float64 // BW in bytes/µs
	kvTokBytes       float64 // per-GPU bytes per new token (KV write + activation)
	kvCtxBytes       float64 // per-GPU bytes per token of context read
	denseWeightBytes float64 // per-GPU weight bytes independent of routing
	moeWeightBytes   float64 // per-GPU bytes of one routed expert across all MoE layers
	experts          float64 // N (0 for dense)
	missRatio        float64 // (N − k)/N
}

// NewRoofline validates its inputs and precomputes the per-step constants.
func NewRoofline(cfg RooflineConfig) (*Roofline, error) {
	m := cfg.Model
	if err := checkModelGPU(m, cfg.GPU, cfg.TP); err != nil {
		return nil, fmt.Errorf("roofline latency model: %w", err)
	}
	if !positive(cfg.GPU.MfuPrefill) || !positive(cfg.GPU.MfuDecode) {
		return nil, fmt.Errorf("roofline latency model: gpu %s needs positive mfuPrefill and mfuDecode, got %v and %v",
			cfg.GPU.Name, cfg.GPU.MfuPrefill, cfg.GPU.MfuDecode)
	}
	L, H := float64(m.Layers), float64(m.Hidden)
	nh, dh, dkv := float64(m.Heads), float64(m.HeadDim), float64(m.KVDim())
	F, Fm, Fs := float64(m.FFN), float64(m.ExpertFFN), float64(m.SharedFFN)
	lMoE := float64(m.MoELayers)
	lDense := L - lMoE
	k := float64(m.ExpertsPerToken)
	tp := float64(cfg.TP)
	bpp, wbpp := m.DtypeBytes, m.WeightBytes
	kvGPU := kvDimPerGPU(m, cfg.TP)

	r := &Roofline{
		aTok: L*(2*(H*H+2*H*dkv)+2*H*H+2*H) + lDense*4*H*F + lMoE*(4*H*Fm*k+4*H*Fs),
		aCtx: L * (4*nh*dh + 5*nh),
	}
	peak := peakTFlops(cfg.GPU, wbpp) * 1e6 // FLOP/µs
	r.pfFlopsPerUs = tp * peak * cfg.GPU.MfuPrefill
	r.dcFlopsPerUs = tp * peak * cfg.GPU.MfuDecode
	r.bytesPerUs = cfg.GPU.BwPeakTBs * 1e6
	r.kvTokBytes = 2*L*kvGPU*bpp + L*H*bpp/tp
	r.kvCtxBytes = 2 * L * kvGPU * bpp
	r.denseWeightBytes = (L*(H*(H+2*dkv)+H*H) + lDense*2*H*F + lMoE*2*H*Fs) * wbpp / tp
	if m.IsMoE() {
		r.moeWeightBytes = lMoE * 2 * H * Fm * wbpp / tp
		r.experts = float64(m.Experts)
		r.missRatio = (r.experts - k) / r.experts
	}
	return r, nil
}

// StepTime implements [Model]; see [Roofline] for the formula.
func (r *Roofline) StepTime(s *Step) int64 {
	var pfFlops, pfTok, pfCtx float64 // prefill Σ FLOPs, Σ t, Σ c
	for i := range s.Prefill {
		w := &s.Prefill[i]
		if w.NewTokens <= 0 {
			continue
		}
		t, c := float64(w.NewTokens), float64(max(w.Context, 0))
		tc := t*c + t*(t-1)/2
		pfFlops += t*r.aTok + tc*r.aCtx
		pfTok += t
		pfCtx += c
	}
	d := float64(max(s.DecodeCount, 0))
	if pfTok == 0 && d == 0 {
		return 1
	}
	ctx := float64(max(s.DecodeContextSum, 0))
	dcFlops := d*r.aTok + ctx*r.aCtx
	computeUs := pfFlops/r.pfFlopsPerUs + dcFlops/r.dcFlopsPerUs

	weights := r.denseWeightBytes
	if r.experts > 0 {
		nEff := r.experts * (1 - math.Pow(r.missRatio, pfTok+d))
		weights += r.moeWeightBytes * nEff
	}
	bytes := weights + (pfTok+d)*r.kvTokBytes + (pfCtx+ctx)*r.kvCtxBytes
	memoryUs := bytes / r.bytesPerUs
	return floorMicros(max(computeUs, memoryUs), 1)
}

// QueueDelay implements [Model]; the roofline model has no queueing overhead.
func (r *Roofline) QueueDelay(int) int64 { return 0 }

// TokenOverhead implements [Model]; zero for the roofline model.
func (r *Roofline) TokenOverhead() int64 { return 0 }

// EndOverhead implements [Model]; zero for the roofline model.
func (r *Roofline) EndOverhead() int64 { return 0 }

// peakTFlops is the peak a model runs at: the FP8 peak when its weights take
// one byte per parameter and the GPU has FP8, else the dense 16-bit peak.
func peakTFlops(g GPU, weightBytes float64) float64 {
	if weightBytes == 1 && g.TFlopsFP8 > 0 {
		return g.TFlopsFP8
	}
	return g.TFlopsPeak
}

// kvDimPerGPU is the per-GPU width of K (or V): n_kv/TP heads of d_h, but at
// least one head, since vLLM replicates KV heads when TP exceeds them.
func kvDimPerGPU(m *ModelConfig, tp int) float64 {
	return float64(max(m.KVHeads, tp)) / float64(tp) * float64(m.HeadDim)
}

// checkModelGPU validates what every analytic model needs.
func checkModelGPU(m *ModelConfig, g GPU, tp int) error {
	if m == nil {
		return fmt.Errorf("no model config")
	}
	if err := m.validate(); err != nil {
		return err
	}
	if err := g.validate(); err != nil {
		return err
	}
	if tp < 1 {
		return fmt.Errorf("tensor parallelism must be ≥ 1, got %d", tp)
	}
	if m.Heads%tp != 0 {
		return fmt.Errorf("model %s: %d attention heads are not divisible by TP %d", m.Name, m.Heads, tp)
	}
	if m.KVHeads >= tp && m.KVHeads%tp != 0 {
		return fmt.Errorf("model %s: %d KV heads are not divisible by TP %d", m.Name, m.KVHeads, tp)
	}
	return nil
}

// validate checks a ModelConfig built by hand (parsed ones already pass).
func (m *ModelConfig) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"hidden size", m.Hidden}, {"layers", m.Layers}, {"attention heads", m.Heads}, {"KV heads", m.KVHeads}, {"head dim", m.HeadDim}, {"FFN width", m.FFN}} {
		if f.v <= 0 || f.v > maxDim {
			return fmt.Errorf("model %s: %s must be in [1, %d], got %d", m.Name, f.name, maxDim, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"experts", m.Experts}, {"experts per token", m.ExpertsPerToken}, {"expert FFN width", m.ExpertFFN}, {"shared FFN width", m.SharedFFN}, {"vocab", m.Vocab}, {"kv_lora_rank", m.KVLoraRank}, {"qk_rope_head_dim", m.QKRopeHeadDim}} {
		if f.v < 0 || f.v > maxDim {
			return fmt.Errorf("model %s: %s must be in [0, %d], got %d", m.Name, f.name, maxDim, f.v)
		}
	}
	if m.MoELayers < 0 || m.MoELayers > m.Layers {
		return fmt.Errorf("model %s: MoE layers %d outside [0, %d]", m.Name, m.MoELayers, m.Layers)
	}
	if !m.IsMoE() && m.MoELayers != 0 {
		return fmt.Errorf("model %s: %d MoE layers but no experts", m.Name, m.MoELayers)
	}
	if m.IsMoE() && (m.ExpertsPerToken < 1 || m.ExpertsPerToken > m.Experts || m.ExpertFFN < 1) {
		return fmt.Errorf("model %s: MoE needs 1 ≤ experts per token (%d) ≤ experts (%d) and a positive expert FFN width", m.Name, m.ExpertsPerToken, m.Experts)
	}
	if !positive(m.DtypeBytes) || !positive(m.WeightBytes) || m.DtypeBytes > 8 || m.WeightBytes > 8 {
		return fmt.Errorf("model %s: bytes per element (%v) and per weight (%v) must be in (0, 8]", m.Name, m.DtypeBytes, m.WeightBytes)
	}
	return nil
}
