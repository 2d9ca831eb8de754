package latency

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// KindPhysics selects [Physics], the default model.
const KindPhysics Kind = "physics"

// Positions in the physics beta vector. The first five are properties of
// the GPU and its kernels (fractions of the data-sheet peaks, and how they
// combine), the next four the fixed costs of a vLLM step, the last two the
// tensor-parallel interconnect.
const (
	PhFlopsEff     = iota // share of peak FLOP/s the GEMMs reach (dense, LM head, experts)
	PhBwEff               // share of HBM bandwidth the weight, KV and activation reads reach
	PhKnee                // share of the smaller of a GEMM's weight read and FLOP time it does not hide: 0 = hard roofline, 1 = the sum
	PhAttnEff             // share of peak FLOP/s prefill attention reaches
	PhKVEff               // share of HBM bandwidth decode attention's KV read reaches
	PhMixedKV             // extra decode KV read in a step that also prefills, as a multiple of the read
	PhMixedKVWide         // the same per 256 decodes in the step: mixed batches slow down with their width
	PhLayerUs             // µs per layer per step: the floor of its small kernels
	PhEagerLayerUs        // µs per layer in a step that prefills: kernels launched one by one, outside a CUDA graph
	PhStepUs              // µs per step: launch, sampling, host work the GPU does not hide
	PhSeqUs               // µs per scheduled request
	PhPrefillSeqUs        // µs per prefill request (a new chunk's input preparation)
	PhLinkEff             // share of the GPU interconnect bandwidth an all-reduce reaches (TP > 1)
	PhLinkOpUs            // µs per all-reduce (latency, TP > 1)
	PhNumBetas            // length of a physics beta vector (11)
)

// PhysicsBetaNames are the short names of the beta positions, in order.
func PhysicsBetaNames() []string {
	return []string{"flops_eff", "bw_eff", "knee", "attn_eff", "kv_eff", "mixed_kv", "mixed_kv_wide", "layer_us", "eager_layer_us", "step_us", "seq_us",
		"prefill_seq_us", "link_eff", "link_op_us"}
}

// physicsBounds are the physical ranges of the coefficients: shares of the
// data-sheet peaks from 2% (a GEMM slower than that is not a GEMM of this
// GPU) to 125% (data sheets quote peaks at the rated boost clock, which
// consumer boards exceed by 10% to 20%),
// the knee in [0, 1], the mixed-batch factors in [0, 8], fixed costs in µs
// up to a second.
var physicsBounds = [PhNumBetas][2]float64{
	{0.02, 1.25}, {0.02, 1.25}, {0, 1}, {0.02, 1.25}, {0.02, 1.25}, {0, 8}, {0, 8}, {0, 1e6}, {0, 1e6}, {0, 1e6}, {0, 1e6}, {0, 1e6}, {0.02, 1.25}, {0, 1e6},
}

// PhysicsBounds returns the physical range [lo, hi] of beta position i.
func PhysicsBounds(i int) (lo, hi float64) { return physicsBounds[i][0], physicsBounds[i][1] }

// PhysicsDefaultAlpha is the physics model's α: Q = 1 ms from a request's
// arrival at the server to the scheduler's queue (HTTP handling,
// tokenisation, the hand-off to the engine process), no end overhead and no
// per-token overhead: a token reaches the client when its step's output is
// processed.
func PhysicsDefaultAlpha() []float64 { return []float64{1000, 0, 0} }

// PhysicsDefaultBeta returns the default physics coefficients for a GPU.
//
// The kernel figures come from per-operation measurements on one H100
// (vidur-profiling: the QKV, output and MLP GEMMs and the element-wise
// kernels of six models at TP 1 to 8, 5,481 shapes from 1 to 4,096
// tokens): with the layer's GEMM FLOPs at 74% of peak, half of the smaller
// of weight read and FLOP time exposed and a per-layer floor, every model
// and TP is within 5.2% MAPE when all four are fitted. The bandwidth share
// is taken at 0.85, what decode weight reads reach once the floor is apart
// (those profiles put it higher only by trading it against their floor),
// and decode attention's KV read likewise; at these defaults the profiles
// are within 8.0% MAPE (12.9% at worst, the smallest model at TP 8) with
// a 51 µs floor (TestPhysicsDefaultsOnH100Kernels). Those kernels ran one
// by one: vLLM replays decode steps as CUDA graphs (15 µs per layer taken)
// but launches a step that prefills outside one; on the LLMServingSim runs
// (vLLM 0.19) such steps cost 78 to 151 µs more per layer, fitted across
// runs, and 80 is taken. The host's own share of a step, 300 µs, and 5 µs
// per scheduled request are the same fits' order (68 to 425 µs); a prefill
// request's attention work outside its FLOPs, 470 µs, theirs too.
// Prefill attention (FlashAttention on Hopper) is taken at 55% of peak,
// and a mixed prefill/decode step reads the decodes' KV 1.5 times as
// slowly plus once more per 256 decodes (measured 1.3 to 4 times in
// LLMServingSim's profiles, the more the more decodes). The all-reduce
// reaches 73% of the NVLink bandwidth with 20 µs per call (vidur's NCCL
// measurements on a DGX H100: 273 to 336 GB/s bus bandwidth on 2 to 8
// GPUs, 7 to 40 µs for small messages).
//
// With these, Qwen3-14B on one H100 takes 34 ms for a decode step of 240
// requests at 1,200 tokens of context and 380 ms for a step that prefills
// 8,192 tokens beside them; the measured steps of such a server at
// saturation are about 31 ms and 360 to 376 ms (measured on a real vLLM 0.23 server).
//
// Other GPUs take the same shares of their own peaks until measured: the
// shares are properties of the kernels as much as of the chip.
func PhysicsDefaultBeta(gpu GPU) []float64 {
	b := make([]float64, PhNumBetas)
	b[PhFlopsEff], b[PhBwEff], b[PhKnee], b[PhAttnEff], b[PhKVEff] = 0.74, 0.85, 0.5, 0.55, 0.85
	b[PhMixedKV], b[PhMixedKVWide] = 0.5, 1
	b[PhLayerUs], b[PhEagerLayerUs], b[PhStepUs], b[PhSeqUs], b[PhPrefillSeqUs] = 15, 80, 300, 5, 470
	b[PhLinkEff], b[PhLinkOpUs] = 0.73, 20
	return b
}

// PhysicsConfig selects the model, GPU, TP and coefficients of a [Physics]
// model: Alpha and Beta both nil (the GPU's defaults) or 3 alphas and
// [PhNumBetas] betas within their physical bounds.
type PhysicsConfig struct {
	Model *ModelConfig
	GPU   GPU
	TP    int
	// DP is the number of data-parallel ranks stepping in lockstep as one
	// instance (vLLM's data parallelism; with a mixture of experts, expert
	// parallelism over all TP·DP GPUs); 0 means 1.
	DP    int
	Alpha []float64
	Beta  []float64
}

// Physics is the default latency model: a roofline with a knee, whose
// coefficients are shares of the GPU's data-sheet peaks and fixed costs in
// µs (docs/simulator.md §8). Per step, with T the new tokens (prefill chunks and
// decodes), S the sequences that sample a token, D the decodes and P the
// prefill requests, and every quantity per GPU:
//
//	StepTime = knee(W_d/BW′, T·F_d/peak′) + knee(W_lm/BW′, S·F_lm/peak′) + knee(W_e(T)/BW′, T·F_e/peak′)
//	         + T·E/BW′ + A_pf/(η_attn·peak) + K·(1 + [P > 0 and D > 0]·(mixed + wide·D/256))/BW″
//	         + n_coll·(link_op + T·H·a·2(TP−1)/TP / (η_link·link))
//	         + L·(layer + [P > 0]·eager) + step + (P + D)·seq + P·prefill_seq
//
// with BW′ = η_bw·BW, BW″ = η_kv·BW and peak′ = η_fl·peak, and knee(a, b) = max(a, b) +
// κ·min(a, b): a GEMM takes the larger of its weight read and its FLOP
// time plus the share κ of the smaller that it does not hide (κ = 0 is the
// hard roofline; measured H100 GEMMs sit at κ ≈ 0.5, the knee is soft).
// W_d and F_d are the dense GEMMs' weight bytes and FLOPs per token
// (attention projections, dense FFNs, shared experts), W_lm and F_lm the
// LM head's, W_e(T) the weights of the n_eff(T) = N(1 − (1 − k/N)^T)
// experts the step's tokens touch and F_e the FLOPs of k experts per token,
// E the element-wise traffic per token (two RMS norms, rotary embedding,
// SiLU-and-mul: 4H + 2(n_h + n_kv)d_h/TP + 3F/TP elements per layer), A_pf
// the prefill attention FLOPs L·4·(n_h/TP)·d_h·Σ nᵢ(cᵢ + nᵢ/2), K the
// decodes' KV read L·2·(d_kv/TP)·a·Σ cⱼ, and n_coll = 2L all-reduces at
// TP > 1. Peak FLOP/s is the FP8 peak for 1-byte weights.
//
// A step that mixes prefill and decode runs both through one
// variable-length attention kernel that reads the decodes' KV far less
// efficiently than a decode-only step, the more so the more decodes
// (measured in LLMServingSim's profiles: 1.6 to 4 times): the mixed and
// wide factors. Decode requests enter through D and Σ cⱼ only, so a [Step]'s (count,
// Σcontext) summary is exact. Q = ⌊α₀⌋, A_end = ⌊α₁⌋, A_tok = ⌊α₂⌋.
type Physics struct {
	alpha [3]float64
	beta  [PhNumBetas]float64
	t     physicsTerms
}

// physicsTerms are the per-GPU constants of a deployment, at peak rates.
type physicsTerms struct {
	layers             float64
	denseWUs, denseFUs float64 // dense weight read (µs) and FLOP time per token (µs)
	lmWUs, lmFUs       float64 // LM head weight read, FLOP time per sampled row
	experts, topK      float64
	expertWUs          float64 // weight read per expert touched (all MoE layers)
	expertFUs          float64 // expert FLOP time per token
	elemUs             float64 // element-wise traffic per token
	attnUs             float64 // prefill attention FLOP time per unit of Σ n(c + n/2)
	kvUs               float64 // decode KV read per context token
	linkOps            float64 // all-reduces per step
	linkTokUs          float64 // all-reduce bytes per token, over the link's peak
	dp                 float64 // data-parallel ranks (per-rank host work is 1/dp of the step's)
}

// NewPhysics validates its inputs and precomputes the constants.
func NewPhysics(cfg PhysicsConfig) (*Physics, error) {
	m := cfg.Model
	if err := checkModelGPU(m, cfg.GPU, cfg.TP); err != nil {
		return nil, fmt.Errorf("physics latency model: %w", err)
	}
	alpha, beta := cfg.Alpha, cfg.Beta
	switch {
	case alpha == nil && beta == nil:
		alpha, beta = PhysicsDefaultAlpha(), PhysicsDefaultBeta(cfg.GPU)
	case alpha == nil || beta == nil:
		return nil, fmt.Errorf("physics latency model: alpha and beta coefficients must be given together")
	}
	if len(alpha) != 3 {
		return nil, fmt.Errorf("physics latency model: want 3 alpha coefficients (Q, A_end, A_tok in µs), got %d", len(alpha))
	}
	if len(beta) != PhNumBetas {
		return nil, fmt.Errorf("physics latency model: want %d beta coefficients (%s), got %d",
			PhNumBetas, strings.Join(PhysicsBetaNames(), ", "), len(beta))
	}
	if err := checkCoeffs("alpha", alpha); err != nil {
		return nil, fmt.Errorf("physics latency model: %w", err)
	}
	for i, v := range beta {
		lo, hi := PhysicsBounds(i)
		if !(v >= lo && v <= hi) {
			return nil, fmt.Errorf("physics latency model: beta %d (%s) = %v is outside its physical range [%g, %g]",
				i+1, PhysicsBetaNames()[i], v, lo, hi)
		}
	}
	dp := max(cfg.DP, 1)
	if dp > maxDim {
		return nil, fmt.Errorf("physics latency model: data parallelism %d is out of range", cfg.DP)
	}
	p := &Physics{alpha: [3]float64(alpha), beta: [PhNumBetas]float64(beta)}
	p.t = newPhysicsTerms(m, cfg.GPU, cfg.TP, dp)
	return p, nil
}

// newPhysicsTerms computes the per-GPU constants. With dp data-parallel
// ranks, each rank holds the whole dense model (split over its tp GPUs)
// and takes 1/dp of the step's tokens, sequences and KV (the ranks are
// taken as balanced, and the step lasts as long as a rank's share); the
// experts are spread over all tp·dp GPUs (expert parallelism), and every
// MoE layer all-gathers the ranks' tokens before the experts and
// reduce-scatters after them.
func newPhysicsTerms(m *ModelConfig, g GPU, tpDeg, dpDeg int) physicsTerms {
	L, H := float64(m.Layers), float64(m.Hidden)
	nh, dh, dkv := float64(m.Heads), float64(m.HeadDim), float64(m.KVDim())
	tp, dp := float64(tpDeg), float64(dpDeg)
	w, a := m.WeightBytes, m.DtypeBytes
	peak := peakTFlops(g, w) * 1e6 // FLOP/µs
	bw := g.BwPeakTBs * 1e6        // bytes/µs
	lMoE := float64(m.MoELayers)
	lDense := L - lMoE
	// Dense GEMM parameters per GPU: q, k, v and o projections in every
	// layer, SwiGLU FFNs in dense layers, shared experts in MoE layers.
	params := L*H*(nh*dh+2*dkv+nh*dh)/tp + lDense*3*H*float64(m.FFN)/tp + lMoE*3*H*float64(m.SharedFFN)/tp
	t := physicsTerms{layers: L, dp: dp}
	// Per-token quantities are per rank: a step's tokens split over dp.
	t.denseWUs = params * w / bw
	t.denseFUs = 2 * params / peak / dp
	vocab := float64(m.Vocab)
	t.lmWUs = vocab * H * w / tp / bw
	t.lmFUs = 2 * vocab * H / tp / peak / dp
	if m.IsMoE() {
		ep := tp * dp
		t.experts, t.topK = float64(m.Experts), float64(m.ExpertsPerToken)
		t.expertWUs = lMoE / ep * 3 * H * float64(m.ExpertFFN) * w / bw
		t.expertFUs = lMoE * t.topK * 6 * H * float64(m.ExpertFFN) / ep / peak
	}
	ffn := lDense*float64(m.FFN) + lMoE*(t.topK*float64(m.ExpertFFN)+float64(m.SharedFFN))
	t.elemUs = (L*(4*H+2*(nh+float64(m.KVHeads))*dh/tp) + 3*ffn/tp) * a / bw / dp
	t.attnUs = L * 4 * (nh / tp) * dh / peak / dp
	if m.IsMLA() {
		t.kvUs = L * float64(m.KVLoraRank+m.QKRopeHeadDim) * a / bw / dp
	} else {
		t.kvUs = L * 2 * kvDimPerGPU(m, tpDeg) * a / bw / dp
	}
	link := linkGBs(g) * 1e3 // bytes/µs
	if tpDeg > 1 {
		// Two all-reduces per layer of a rank's tokens.
		t.linkOps = 2 * L
		t.linkTokUs = t.linkOps * H * a * 2 * (tp - 1) / tp / link / dp
	}
	if dpDeg > 1 && m.IsMoE() {
		// All-gather and reduce-scatter of every rank's tokens per MoE layer.
		t.linkOps += 2 * lMoE
		t.linkTokUs += 2 * lMoE * H * a * (dp - 1) / dp / link
	}
	return t
}

// linkGBs is a GPU's interconnect bandwidth per direction, GB/s: the
// hardware file's LinkGBs, else NVLink for the embedded data-centre GPUs
// (H100 NVLink 4: 450 GB/s; A100 NVLink 3: 300 GB/s), else PCIe 4.0 x16
// (32 GB/s).
func linkGBs(g GPU) float64 {
	if g.LinkGBs > 0 {
		return g.LinkGBs
	}
	switch n := strings.ToUpper(g.Name); {
	case strings.HasPrefix(n, "H100"), strings.HasPrefix(n, "H200"):
		return 450
	case strings.HasPrefix(n, "A100"):
		return 300
	}
	return 32
}

// PhysicsStep is one step's raw quantities at peak rates (µs) and counts:
// what StepTime combines with the coefficients, and what a fit needs.
type PhysicsStep struct {
	DenseW, DenseF   float64 // dense GEMMs: weight read, FLOP time
	LMW, LMF         float64 // LM head
	ExpertW, ExpertF float64 // MoE experts
	Elem             float64 // element-wise traffic
	Attn             float64 // prefill attention FLOP time
	KV               float64 // decode KV read
	MixedKV          float64 // the decode KV read again in a mixed step (else 0)
	MixedKVWide      float64 // MixedKV times the decodes / 256
	Link             float64 // all-reduce bytes over the link's peak
	Layers, LinkOps  float64
	EagerLayers      float64 // the layers, when the step prefills (else 0)
	Seqs, PrefillSeq float64
	Empty            bool
}

// Quantities returns the step's raw quantities.
func (p *Physics) Quantities(s *Step) PhysicsStep {
	var q PhysicsStep
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
		q.Empty = true
		return q
	}
	t := &p.t
	tok := tpf + d
	q.DenseW, q.DenseF = t.denseWUs, tok*t.denseFUs
	q.LMW, q.LMF = t.lmWUs, (sample+d)*t.lmFUs
	if t.experts > 0 {
		q.ExpertW = t.expertWUs * p.ExpertsTouched(tok)
		q.ExpertF = tok * t.expertFUs
	}
	q.Elem = tok * t.elemUs
	q.Attn = attn * t.attnUs
	q.KV = float64(max(s.DecodeContextSum, 0)) * t.kvUs
	if npf > 0 && d > 0 {
		q.MixedKV = q.KV
		q.MixedKVWide = q.KV * d / 256
	}
	q.Link = tok * t.linkTokUs
	q.Layers, q.LinkOps = t.layers, t.linkOps
	if npf > 0 {
		q.EagerLayers = t.layers
	}
	q.Seqs, q.PrefillSeq = (npf+d)/t.dp, npf/t.dp // each rank's host works on its own share
	return q
}

// ExpertsTouched is the expected number of distinct experts (of each MoE
// layer) that a step's tokens route to: N(1 − (1 − k/N)^T); 0 for dense
// models.
func (p *Physics) ExpertsTouched(tokens float64) float64 {
	t := &p.t
	if t.experts == 0 {
		return 0
	}
	return t.experts * (1 - math.Pow(1-t.topK/t.experts, tokens))
}

// Knee is a GEMM's time from its weight read a and FLOP time b: the larger
// plus the share k of the smaller.
func Knee(a, b, k float64) float64 { return max(a, b) + k*min(a, b) }

// PhysicsTime combines a step's quantities with coefficients beta (µs, unfloored).
func PhysicsTime(q *PhysicsStep, beta []float64) float64 {
	if q.Empty {
		return 0
	}
	ub, uf, k := 1/beta[PhBwEff], 1/beta[PhFlopsEff], beta[PhKnee]
	t := Knee(q.DenseW*ub, q.DenseF*uf, k) + Knee(q.LMW*ub, q.LMF*uf, k)
	if q.ExpertW > 0 || q.ExpertF > 0 {
		t += Knee(q.ExpertW*ub, q.ExpertF*uf, k)
	}
	t += q.Elem*ub + (q.KV+beta[PhMixedKV]*q.MixedKV+beta[PhMixedKVWide]*q.MixedKVWide)/beta[PhKVEff] + q.Attn/beta[PhAttnEff]
	if q.LinkOps > 0 {
		t += q.LinkOps*beta[PhLinkOpUs] + q.Link/beta[PhLinkEff]
	}
	return t + q.Layers*beta[PhLayerUs] + q.EagerLayers*beta[PhEagerLayerUs] + beta[PhStepUs] + q.Seqs*beta[PhSeqUs] + q.PrefillSeq*beta[PhPrefillSeqUs]
}

// StepTime implements [Model]; see [Physics] for the formula.
func (p *Physics) StepTime(s *Step) int64 {
	q := p.Quantities(s)
	if q.Empty {
		return 1
	}
	return floorMicros(PhysicsTime(&q, p.beta[:]), 1)
}

// QueueDelay implements [Model]: ⌊α₀⌋.
func (p *Physics) QueueDelay(int) int64 { return floorMicros(p.alpha[0], 0) }

// TokenOverhead implements [Model]: ⌊α₂⌋.
func (p *Physics) TokenOverhead() int64 { return floorMicros(p.alpha[2], 0) }

// EndOverhead implements [Model]: ⌊α₁⌋.
func (p *Physics) EndOverhead() int64 { return floorMicros(p.alpha[1], 0) }

// Coefficients returns copies of the alphas and betas in effect.
func (p *Physics) Coefficients() (alpha, beta []float64) {
	return slices.Clone(p.alpha[:]), slices.Clone(p.beta[:])
}
