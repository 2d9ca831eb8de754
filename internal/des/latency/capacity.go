package latency

import (
	"fmt"
	"math"
	"strings"
)

// Memory constants of the KV capacity computation (docs/simulator.md §8.5, from the
// llm-d capacity planner that BLIS follows).
const (
	activationGiBDense = 5.5  // activation peak of a dense model, once per instance
	activationGiBMoE   = 8.0  // activation peak of an MoE model
	nonTorchGiBTP1     = 0.15 // CUDA context etc. per GPU at TP 1
	nonTorchGiBTPMulti = 0.6  // per GPU at TP > 1 (adds NCCL buffers)
	bytesPerGiB        = 1 << 30
)

// WeightParams is the number of weight parameters KV capacity charges for
// (docs/simulator.md §8.5): embeddings V·H, per layer attention H(H + 2d_kv) + H² and two
// norms 2H, per dense layer an SwiGLU FFN 3·H·F, per MoE layer
// 3·H·F_moe·N + 3·H·F_shared + N·H (router), lm_head V·H unless tied, and
// the final norm H. Dense and MoE layers follow [ModelConfig.MoELayers].
func WeightParams(m *ModelConfig) float64 {
	L, H, V := float64(m.Layers), float64(m.Hidden), float64(m.Vocab)
	dkv := float64(m.KVDim())
	lMoE := float64(m.MoELayers)
	p := V*H + L*(H*(H+2*dkv)+H*H+2*H) + (L-lMoE)*3*H*float64(m.FFN) + H
	if m.IsMoE() {
		N := float64(m.Experts)
		p += lMoE * (3*H*float64(m.ExpertFFN)*N + 3*H*float64(m.SharedFFN) + N*H)
	}
	if !m.TieWordEmbeddings {
		p += V * H
	}
	return p
}

// KVBytesPerTokenPerGPU is the KV cache one token occupies on each GPU:
// L·2·(n_kv/TP)·d_h·bpp (at least one KV head per GPU, as vLLM replicates
// heads when TP exceeds them), or for MLA L·(kv_lora_rank +
// qk_rope_head_dim)·bpp, which every GPU holds in full.
func KVBytesPerTokenPerGPU(m *ModelConfig, tp int) float64 {
	if m.IsMLA() {
		return float64(m.Layers) * float64(m.KVLoraRank+m.QKRopeHeadDim) * m.KVBytes()
	}
	return float64(m.Layers) * 2 * kvDimPerGPU(m, tp) * m.KVBytes()
}

// KVBlocks derives the number of KV blocks of one instance from GPU memory
// (docs/simulator.md §8.5):
//
//	available = MemoryGiB·gpuMemUtil·TP
//	overhead  = weights + activation (5.5 GiB dense, 8.0 MoE) + non-torch (0.15 GiB at TP 1, else 0.6)·TP
//	weights   = WeightParams·weight bytes/param
//	T = ⌊⌊(available − overhead)·2³⁰⌋ / (⌊KV bytes per token per GPU·b⌋·TP)⌋
//
// Deviation from the spec's text: it divides the memory of all TP GPUs by
// the per-GPU bytes of a block, which at TP > 1 counts every block TP times
// (a pool that cannot fit, e.g. 122 GiB of KV per 80 GiB GPU for
// Llama-3.1-8B at TP 2). A block lives on every GPU of the group, so the
// divisor here is the block's bytes over the whole group. At TP 1 the two
// agree, including the check values qwen3-14b → 15909 and
// llama-3.1-8b-instruct → 26312 blocks on an H100.
//
// Only SwiGLU-family activations are supported (the weight estimate assumes a
// three-matrix FFN); other models need an explicit block count.
func KVBlocks(m *ModelConfig, g GPU, tp int, gpuMemUtil float64, blockSize int) (int64, error) {
	if err := checkModelGPU(m, g, tp); err != nil {
		return 0, fmt.Errorf("kv capacity: %w", err)
	}
	if !(gpuMemUtil > 0 && gpuMemUtil <= 1) {
		return 0, fmt.Errorf("kv capacity: gpu memory utilization must be in (0, 1], got %v", gpuMemUtil)
	}
	if blockSize < 1 {
		return 0, fmt.Errorf("kv capacity: block size must be ≥ 1, got %d", blockSize)
	}
	if !positive(g.MemoryGiB) {
		return 0, fmt.Errorf("kv capacity: gpu %s has no MemoryGiB; give the number of KV blocks", g.Name)
	}
	if m.Vocab <= 0 {
		return 0, fmt.Errorf("kv capacity: model %s has no vocab_size; give the number of KV blocks", m.Name)
	}
	if !gatedFFN(m) {
		return 0, fmt.Errorf("kv capacity: model %s uses activation %q; only gated FFNs (activations silu, swiglu, geglu; Gemma's GeGLU) are supported; give the number of KV blocks",
			m.Name, m.HiddenAct)
	}
	available := g.MemoryGiB * gpuMemUtil * float64(tp)
	weightsGiB := WeightParams(m) * m.WeightBytes / bytesPerGiB
	activation := activationGiBDense
	if m.IsMoE() {
		activation = activationGiBMoE
	}
	nonTorch := nonTorchGiBTP1
	if tp > 1 {
		nonTorch = nonTorchGiBTPMulti
	}
	overhead := weightsGiB + activation + nonTorch*float64(tp)
	if overhead >= available {
		return 0, fmt.Errorf("kv capacity: model %s does not fit on %d × %s: %.2f GiB weights + %.2f GiB activation + %.2f GiB non-torch ≥ %.2f GiB available (%.0f GiB × %.2f × %d)",
			m.Name, tp, g.Name, weightsGiB, activation, nonTorch*float64(tp), available, g.MemoryGiB, gpuMemUtil, tp)
	}
	free := math.Floor((available - overhead) * bytesPerGiB)
	perBlock := math.Floor(KVBytesPerTokenPerGPU(m, tp)*float64(blockSize)) * float64(tp)
	if !(perBlock > 0) {
		return 0, fmt.Errorf("kv capacity: model %s: a block of %d tokens takes no bytes", m.Name, blockSize)
	}
	blocks := math.Floor(free / perBlock)
	if blocks < 1 {
		return 0, fmt.Errorf("kv capacity: model %s on %d × %s leaves room for no KV block (%.2f GiB free)", m.Name, tp, g.Name, (available - overhead))
	}
	return int64(blocks), nil
}

// gatedFFN reports whether the model's FFN has three matrices (gate, up,
// down), which the weight estimate assumes: a SwiGLU-family activation, or
// a Gemma model, whose GeGLU FFN names its activation gelu_pytorch_tanh.
func gatedFFN(m *ModelConfig) bool {
	switch strings.ToLower(m.HiddenAct) {
	case "", "silu", "swish", "swiglu", "geglu":
		return true
	}
	return strings.HasPrefix(m.ModelType, "gemma")
}

// MaxModelLen is the default max_model_len M (docs/simulator.md §6.2): the model's
// max_position_embeddings, scaled by rope_scaling.factor for the rope types
// linear, dynamic, yarn, default and mrope, capped at totalBlocks·blockSize;
// or totalBlocks·blockSize when the model does not say.
//
// For yarn, as in vLLM, the scaled length is original_max_position_embeddings
// × factor when the original is given (the spec's reading of
// max_position_embeddings × factor would scale an already-extended length
// twice: DeepSeek-V2-Lite gives 4096 × 40 = 163840, its real context, not
// 163840 × 40). Gemma 3 configs already hold the scaled length, as vLLM
// assumes. Returns 0 when totalBlocks or blockSize is not positive.
func MaxModelLen(m *ModelConfig, totalBlocks int64, blockSize int) int64 {
	if totalBlocks < 1 || blockSize < 1 {
		return 0
	}
	limit := float64(totalBlocks) * float64(blockSize)
	derived := float64(m.MaxPositionEmbeddings)
	if derived <= 0 {
		return int64(min(limit, float64(maxMicros)))
	}
	factor := m.RopeFactor
	if !(factor > 0) {
		factor = 1
	}
	switch m.RopeType {
	case "linear", "dynamic", "default", "mrope":
		if !strings.Contains(m.ModelType, "gemma3") {
			derived *= factor
		}
	case "yarn":
		if m.RopeOriginalMax > 0 {
			derived = float64(m.RopeOriginalMax)
		}
		derived *= factor
	}
	return int64(max(1, min(derived, limit, float64(maxMicros))))
}
