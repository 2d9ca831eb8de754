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
	PhEagerLayerUs        // µs per layer of a step outside a CUDA graph: paid in full where attention runs between graph pieces, hidden behind the GPU's work where the whole step is launched from the host
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
// tokens): timed one by one, the layer's GEMMs reach 74% of the FLOP/s
// peak with half of the smaller of weight read and FLOP time exposed (the
// kernel-level knee), and every model and TP is within 8.0% MAPE (12.9% at
// worst, the smallest model at TP 8) with a 51 µs launch floor
// (TestPhysicsDefaultsOnH100Kernels). The bandwidth share is taken at
// 0.85, what decode weight reads reach once the floor is apart, and decode
// attention's KV read likewise. In a step the kernels run back to back
// and the next one's weight read fills what a lone kernel leaves idle, so
// a step's knee is 0: a decode-only step of 253 requests then takes what
// the real one does (TestPhysicsStepsOnH100).
//
// vLLM replays decode steps as CUDA graphs (15 µs per layer taken for
// their small kernels); a step outside a graph (see [CUDAGraphs]) takes
// 80 µs more per layer where its attention runs between graph pieces,
// fitted across LLMServingSim's runs of vLLM 0.19 (78 to 197), and at
// least 95 µs a layer of host launches where it runs with no graph. The host's own share of a step, 300 µs,
// and 5 µs per scheduled request are the same fits' order (48 to 425 µs);
// a prefill request's attention work outside its FLOPs, 470 µs, theirs
// too. Prefill attention (FlashAttention on Hopper) is taken at 55% of
// peak. A mixed prefill/decode step reads the decodes' KV more slowly:
// half as slowly again plus a quarter per 256 decodes on Hopper (a prompt
// and 252 decodes of Qwen3-14B on an H100 take 75.7 ms where their parts
// add to 65); FlashAttention 2, on the other GPUs, far more (fa2MixedKV). The
// all-reduce reaches 73% of the NVLink bandwidth (vidur's NCCL measurements
// on a DGX H100: 273 to 336 GB/s bus bandwidth on 2 to 8 GPUs) with 8 µs
// per call: small messages take 6 µs at best on two GPUs there, and
// vLLM's own all-reduce inside a CUDA graph 5 to 10 µs.
//
// GPUs that talk over PCIe (no NVLink) pay far more per collective. NCCL's
// all-reduce of 256 B to 64 KB takes 24 to 25 µs on RTX PRO 6000
// Blackwell boards over PCIe 5.0 (nccl-tests, published in the
// voipmonitor/rtx6kpro knowledge base, hardware/pcie-bandwidth.md), so a
// call costs 25 µs. Messages of 32 MB and more reach 22 to 40 GB/s of bus
// bandwidth with NCCL's default settings there (0.35 to 0.64 of the link),
// but a step's are smaller (a token's hidden state, 10 to 16 KB, times the
// step's tokens: tens of KB to tens of MB), and NCCL reaches less on them:
// below a few hundred KB it sends with its LL protocol, half of whose
// every 8-byte word is a flag (LL128, which wastes less, runs only over
// NVLink), and larger messages approach the peak only at tens of MB. The
// share is taken at 0.25, what LLMServingSim's description of its own RTX
// PRO 6000 machine gives (16 of its 64 GB/s, and 20 µs a collective).
//
// With these, Qwen3-14B on one H100 takes 27.9 ms for a decode step of
// 253 requests at 1,050 tokens of context, 78.3 ms with a 990-token prompt
// beside 252 of them and 352 ms for a step that fills the 8,192-token
// budget; the real vLLM 0.23 steps take 27.8, 75.7 and 363 ms.
//
// Other GPUs take the same shares of their own peaks until measured: the
// shares are properties of the kernels as much as of the chip.
func PhysicsDefaultBeta(gpu GPU) []float64 {
	b := make([]float64, PhNumBetas)
	b[PhFlopsEff], b[PhBwEff], b[PhKnee], b[PhAttnEff], b[PhKVEff] = kernelFlopsEff, 0.85, 0, 0.55, 0.85
	b[PhMixedKV], b[PhMixedKVWide] = 0.5, 0.25
	if !gpu.family().hopper {
		b[PhMixedKV], b[PhMixedKVWide] = fa2MixedKV, fa2MixedKVWide
	}
	b[PhLayerUs], b[PhEagerLayerUs], b[PhStepUs], b[PhSeqUs], b[PhPrefillSeqUs] = 15, 80, 300, 5, 470
	b[PhLinkEff], b[PhLinkOpUs] = 0.73, 8
	if gpu.overPCIe() {
		b[PhLinkEff], b[PhLinkOpUs] = 0.25, 25
	}
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
	DP int
	// Graphs is the CUDA-graph regime of the vLLM that serves: which steps
	// run as captured graphs and which launch their kernels one by one.
	Graphs CUDAGraphs
	Alpha  []float64
	Beta   []float64
}

// DefaultMaxCaptureTokens is the largest batch vLLM captures as a CUDA
// graph unless told otherwise: its max_cudagraph_capture_size defaults to
// 512 tokens (less when max_num_seqs is small).
const DefaultMaxCaptureTokens = 512

// CUDAGraphs is the CUDA-graph regime of a vLLM server. The V1 engine
// (from vLLM 0.8) replays a decode-only step as one captured graph. A step
// that also prefills is captured whole only where the attention backend
// allows it (FlashAttention 3, on Hopper); elsewhere its attention runs
// between graph pieces, launched layer by layer, which LLMServingSim's
// runs of vLLM 0.19 on RTX GPUs price like an eager step. A step of more
// tokens than the largest captured size runs eagerly everywhere. The V0
// engine captured decode-only steps alone (DecodeOnly), and
// --enforce-eager captures nothing (Eager).
type CUDAGraphs struct {
	Eager            bool // no graphs: every step launches its kernels one by one
	DecodeOnly       bool // graphs for decode-only steps only: a step that prefills runs eagerly
	MaxCaptureTokens int  // the largest captured batch in tokens; 0 = DefaultMaxCaptureTokens
}

// regime says how a step of tokens new tokens runs outside a CUDA graph:
// prefills says whether it holds a prompt chunk, mixed whether one of them
// is longer than a token (a one-token query is a decode row to the V1
// engine's attention backends), mixedFull whether the attention backend
// lets a step with a longer query run as one graph.
//
// A step with a longer query where the backend cannot capture it whole
// (not FlashAttention 3) pays its per-layer cost in full (split): LLMServingSim's
// runs of vLLM 0.19 on RTX GPUs charge such steps 78 to 197 µs a layer,
// and letting the GPU's work hide it, as below, moves their replays off
// (the fitted Qwen3-30B-A3B run's TTFT from 9% to 15% MAPE, three of the
// four runs' unfitted E2E worse). Any other step that runs without a graph
// (more tokens than the largest captured size, --enforce-eager, a prefill
// under V0) launches its kernels one by one from the host, ahead of the
// GPU (ungraphed): the launches cost time only where they outrun the
// kernels, and a layer of a step of hundreds of tokens computes far longer
// than its launches take (a 990-token prompt beside 2 decodes of Qwen3-14B
// on an H100 takes 39.6 ms: 41.0 with the launches hidden, 44.2 with them
// added).
func (g CUDAGraphs) regime(tokens float64, prefills, mixed, mixedFull bool) (split, ungraphed bool) {
	limit := g.MaxCaptureTokens
	if limit <= 0 {
		limit = DefaultMaxCaptureTokens
	}
	if mixed && !mixedFull {
		return true, false
	}
	return false, g.Eager || tokens > float64(limit) || (prefills && g.DecodeOnly)
}

// attnTileRows is the number of query rows FlashAttention 3 processes per
// tile. On Hopper (FlashAttention 3) a step that mixes prompts with decodes
// still splits the decodes' KV read over the GPU, and its attention is
// configured for its longest query: a prompt chunk of a full tile or more
// costs the decodes' KV read the full mixed-batch penalty, a short chunk
// (the uncached tail of a prompt the prefix cache served) the share of a
// tile it fills, close to one more decode row. FlashAttention 2, on the
// other GPUs, gives up splitting the decodes' KV as soon as any query is
// longer than one token: LLMServingSim's profiles of an RTX PRO 6000 show
// the same penalty behind a 16-token chunk as behind a 2,048-token one.
const attnTileRows = 128

// Physics is the default latency model: a roofline with a knee, whose
// coefficients are shares of the GPU's data-sheet peaks and fixed costs in
// µs (docs/simulator.md §8). Per step, with T the new tokens (prefill chunks and
// decodes), S the sequences that sample a token, D the decodes and P the
// prefill requests, and every quantity per GPU:
//
//	G        = knee(W_d/BW′, T·F_d/peak′) + knee(W_lm/BW′, S·F_lm/peak′) + knee(W_e(T)/BW′, T·F_e/peak′)
//	         + T·E/BW′ + A_pf/(η_attn·peak) + K·(1 + [P > 0 and D > 0]·s·(mixed + wide·D/256))/BW″
//	         + n_coll·(link_op + T·H·a·2(TP−1)/TP / (η_link·link)) + L·layer   (G, the GPU's work)
//	StepTime = max(G, [ungraphed]·L·(layer + eager)) + [split]·L·eager + step + (P + D)·seq + P′·prefill_seq
//
// with BW′ = η_bw·BW, BW″ = η_kv·BW and peak′ = η_fl·peak, and knee(a, b) = max(a, b) +
// κ·min(a, b): a GEMM takes the larger of its weight read and its FLOP
// time plus the share κ of the smaller that it does not hide (κ = 0 is the
// hard roofline; H100 GEMMs timed one by one sit at κ ≈ 0.5, a step of them back to back at 0).
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
// [split] and [ungraphed] are how the step runs outside a CUDA graph
// ([CUDAGraphs]): a step launched from the host layer by layer takes at
// least its launches, which otherwise hide behind the GPU's work.
// Under FlashAttention 3 (Hopper) s is the share of an attention tile the
// longest prompt chunk fills, min(n/128, 1), and P′ the sum of those shares
// over the chunks; elsewhere s = 1 and P′ = P. A chunk of one token is a
// decode row to the attention backend: it counts in neither P′ nor s, and
// a step whose chunks are all of one token runs as a decode step.
//
// A step that mixes prefill and decode runs both through one
// variable-length attention kernel that reads the decodes' KV far less
// efficiently than a decode-only step, the more so the more decodes
// (measured in LLMServingSim's profiles: 1.8 to 3.7 times): the mixed and
// wide factors. Decode requests enter through D and Σ cⱼ only, so a [Step]'s (count,
// Σcontext) summary is exact. Q = ⌊α₀⌋, A_end = ⌊α₁⌋, A_tok = ⌊α₂⌋.
type Physics struct {
	alpha  [3]float64
	beta   [PhNumBetas]float64
	t      physicsTerms
	graphs CUDAGraphs
	fa3    bool // FlashAttention 3: the mixed-batch penalty scales with the longest prompt chunk
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
	if cfg.Graphs.MaxCaptureTokens < 0 || cfg.Graphs.MaxCaptureTokens > maxDim {
		return nil, fmt.Errorf("physics latency model: CUDA-graph capture size %d is out of range", cfg.Graphs.MaxCaptureTokens)
	}
	p := &Physics{alpha: [3]float64(alpha), beta: [PhNumBetas]float64(beta), graphs: cfg.Graphs, fa3: cfg.GPU.family().hopper}
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
	t.kvUs = KVBytesPerTokenPerGPU(m, tpDeg) / bw / dp
	link := g.linkGBs() * 1e3 // bytes/µs
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
	EagerLayers      float64 // the layers, when the step pays the per-layer cost in full (else 0)
	LaunchLayers     float64 // the layers, when the step launches them from the host, ahead of the GPU (else 0)
	Seqs, PrefillSeq float64
	Empty            bool
}

// Quantities returns the step's raw quantities.
func (p *Physics) Quantities(s *Step) PhysicsStep {
	var q PhysicsStep
	var tpf, attn, npf, long, tiles, widest, sample, oneCtx float64
	for i := range s.Prefill {
		w := &s.Prefill[i]
		if w.NewTokens <= 0 {
			continue
		}
		n, c := float64(w.NewTokens), float64(max(w.Context, 0))
		tpf += n
		npf++
		if n == 1 { // a decode row: it reads its context's KV
			oneCtx += c
		} else {
			attn += n * (c + n/2)
			long++
			tiles += min(n/attnTileRows, 1)
		}
		widest = max(widest, n)
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
	q.KV = (float64(max(s.DecodeContextSum, 0)) + oneCtx) * t.kvUs
	// A query of one token (the last prompt token a decode instance
	// recomputes after a KV transfer, a fully cached prompt's) is a decode
	// row to the attention backend: a step of such queries alone runs as a
	// decode batch.
	mixed := widest > 1
	if mixed && d > 0 {
		share := 1.0
		if p.fa3 {
			share = min(widest/attnTileRows, 1)
		}
		q.MixedKV = q.KV * share
		q.MixedKVWide = q.MixedKV * d / 256
	}
	q.Link = tok * t.linkTokUs
	q.Layers, q.LinkOps = t.layers, t.linkOps
	switch split, ungraphed := p.graphs.regime(tok/t.dp, tpf > 0, mixed, p.fa3); {
	case split:
		q.EagerLayers = t.layers
	case ungraphed:
		q.LaunchLayers = t.layers
	}
	// Each rank's host works on its own share. Under FlashAttention 3 a
	// prompt chunk's own attention work scales with the tiles it fills;
	// under FlashAttention 2 every chunk of more than one token costs it
	// whole.
	if !p.fa3 {
		tiles = long
	}
	q.Seqs, q.PrefillSeq = (npf+d)/t.dp, tiles/t.dp
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
	return max(GPUTime(q, beta), LaunchTime(q, beta)) + q.EagerLayers*beta[PhEagerLayerUs] +
		beta[PhStepUs] + q.Seqs*beta[PhSeqUs] + q.PrefillSeq*beta[PhPrefillSeqUs]
}

// GPUTime is the part of a step's time its kernels take on the GPU
// (µs, unfloored): GEMMs, element-wise traffic, attention, collectives and
// the per-layer floor of small kernels.
func GPUTime(q *PhysicsStep, beta []float64) float64 {
	ub, uf, k := 1/beta[PhBwEff], 1/beta[PhFlopsEff], beta[PhKnee]
	t := Knee(q.DenseW*ub, q.DenseF*uf, k) + Knee(q.LMW*ub, q.LMF*uf, k)
	if q.ExpertW > 0 || q.ExpertF > 0 {
		t += Knee(q.ExpertW*ub, q.ExpertF*uf, k)
	}
	return t + q.Elem*ub + GPUFixed(q, beta)
}

// GPUFixed is the part of GPUTime that neither the FLOP/s nor the
// bandwidth share of the GEMMs scales (µs): attention, the decodes' KV
// read, collectives and the per-layer floor.
func GPUFixed(q *PhysicsStep, beta []float64) float64 {
	t := (q.KV+beta[PhMixedKV]*q.MixedKV+beta[PhMixedKVWide]*q.MixedKVWide)/beta[PhKVEff] + q.Attn/beta[PhAttnEff]
	if q.LinkOps > 0 {
		t += q.LinkOps*beta[PhLinkOpUs] + q.Link/beta[PhLinkEff]
	}
	return t + q.Layers*beta[PhLayerUs]
}

// LaunchTime is how long the host takes to launch a step that runs
// without a CUDA graph, layer by layer (0 under a graph): the step's GPU
// work cannot end before it.
func LaunchTime(q *PhysicsStep, beta []float64) float64 {
	return q.LaunchLayers * (beta[PhLayerUs] + beta[PhEagerLayerUs])
}

// LaunchBound reports whether the host's launches, not the GPU's work,
// set the step's time at the model's coefficients.
func (p *Physics) LaunchBound(q *PhysicsStep) bool {
	return q.LaunchLayers > 0 && LaunchTime(q, p.beta[:]) > GPUTime(q, p.beta[:])
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

// FlashAttention 2's mixed-batch factors, on every GPU but Hopper: it
// stops splitting the decodes' KV read as soon as one query is longer than
// a token, and a mixed step's decodes read their KV at 1.8 to 3.7 times
// the cost of a decode-only step's, the more, the more decodes. Fitted to the
// mixed attention rows of LLMServingSim's kernel profiles of four
// deployments together (Llama-3.1-8B on an RTX 4090 and an RTX PRO 6000,
// Qwen3-30B-A3B and Qwen3-32B on RTX PRO 6000s; vLLM 0.19), with the
// attention kernels' own floors and every other coefficient at its
// default: 0.79 and 1.79 (internal/fidelity's TestFA2MixedDefaults
// recomputes them; without one profile in turn they range 0.35–1.45 and
// 1.21–2.53).
const (
	fa2MixedKV     = 0.79
	fa2MixedKVWide = 1.79
)

// Kernel-level shares: what one GEMM reaches when timed on its own
// (vidur's H100 profiles): 74% of the FLOP/s peak, and half of the
// smaller of its weight read and FLOP time exposed. Back to back in a
// step, the next kernel's weight read fills what a lone kernel leaves
// idle: the step's knee is 0 (a decode-only step of 253 requests of
// Qwen3-14B on an H100 takes 27.8 ms, what the hard roofline gives).
const (
	kernelFlopsEff = 0.74
	kernelKnee     = 0.5
)
