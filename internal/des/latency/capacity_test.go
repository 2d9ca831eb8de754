package latency

import (
	"strings"
	"testing"
)

func TestKVBlocksCheckValues(t *testing.T) {
	// The spec's check values (docs/simulator.md §8.5), H100, TP 1, utilisation 0.9, block 16.
	h100, err := LookupGPU("H100")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		model string
		want  int64
	}{{"qwen3-14b", 15909}, {"llama-3.1-8b-instruct", 26312}} {
		m, err := LookupModel(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		got, err := KVBlocks(m, h100, 1, 0.9, 16)
		if err != nil {
			t.Fatalf("%s: %v", tt.model, err)
		}
		if got != tt.want {
			t.Errorf("%s on H100 TP 1: %d blocks, want %d", tt.model, got, tt.want)
		}
	}
}

func TestKVBlocksHand(t *testing.T) {
	// tinyDense: params = V·H 256 + L·(H(H+2d_kv) + H² + 2H) = 2·(128 + 64 + 16) = 416
	//   + L·3H·F = 768 + lm_head 256 + final norm 8 = 1704; ×2 bytes = 3408.
	//   8 GiB × 1.0, TP 1: free = ⌊(8 − 5.5 − 0.15)·2³⁰ − 3408⌋ = 2523289878 bytes;
	//   block = L·2·d_h·n_kv·2·16 = 512 bytes → 4928300 blocks.
	//   TP 2 (n_kv 1 < TP: one head replicated per GPU, 32 bytes/token/GPU):
	//   free = ⌊(16 − 5.5 − 1.2)·2³⁰ − 3408⌋ = 9985795555; block over the group
	//   = 512·2 = 1024 → 9751753 blocks.
	// tinyDeepSeek (tied, 1 dense + 3 MoE layers): params = 256 + 4·(8·24 + 64 + 16)
	//   + 3·8·12 + 3·(3·8·6·4 + 3·8·5 + 4·8) + 8 = 256 + 1088 + 288 + 2184 + 8 = 3824;
	//   32 GiB × 0.5, TP 1: free = ⌊(16 − 8 − 0.15)·2³⁰ − 7648⌋ = 8428865670;
	//   block = 4·2·8·2·16 = 2048 → 4115657.
	//   With MLA (kv_lora_rank 8, qk_rope_head_dim 2) at TP 2: a GPU holds the
	//   whole latent, 4·10·2 = 80 bytes/token, block 1280·2 = 2560; free =
	//   ⌊(32 − 8 − 1.2)·2³⁰ − 7648⌋ = 24481305939 → 9563010.
	dense := mustModel(t, tinyDenseJSON)
	deep := mustModel(t, strings.Replace(tinyDeepSeekJSON, `"vocab_size": 32`, `"vocab_size": 32, "hidden_act": "silu"`, 1))
	mla := mustModel(t, strings.Replace(tinyDeepSeekJSON, `"vocab_size": 32`, `"vocab_size": 32, "kv_lora_rank": 8, "qk_rope_head_dim": 2`, 1))
	tests := []struct {
		name   string
		m      *ModelConfig
		gpu    GPU
		tp     int
		util   float64
		params float64
		want   int64
	}{
		{"dense TP 1", dense, unitGPU, 1, 1, 1704, 4928300},
		{"dense TP 2 replicated KV head", dense, unitGPU, 2, 1, 1704, 9751753},
		{"MoE tied TP 1", deep, fastComputeGPU, 1, 0.5, 3824, 4115657},
		{"MLA TP 2", mla, fastComputeGPU, 2, 0.5, 3824, 9563010},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WeightParams(tt.m); got != tt.params {
				t.Errorf("WeightParams = %v, want %v", got, tt.params)
			}
			got, err := KVBlocks(tt.m, tt.gpu, tt.tp, tt.util, 16)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("KVBlocks = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestKVBlocksFitOnEveryGPU checks the pool against the memory it lives in:
// each GPU of the group holds a share of every block, plus its share of the
// weights and activation and its own non-torch overhead. (The spec's literal
// formula fails this at TP > 1 by a factor TP.)
func TestKVBlocksFitOnEveryGPU(t *testing.T) {
	for _, name := range KnownModels() {
		m, err := LookupModel(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, gpuName := range []string{"H100", "L40S"} {
			g, _ := LookupGPU(gpuName)
			for _, tp := range []int{1, 2, 4, 8} {
				blocks, err := KVBlocks(m, g, tp, 0.9, 16)
				if err != nil {
					continue // does not fit, or heads not divisible: covered elsewhere
				}
				act := activationGiBDense
				if m.IsMoE() {
					act = activationGiBMoE
				}
				nonTorch := nonTorchGiBTP1
				if tp > 1 {
					nonTorch = nonTorchGiBTPMulti
				}
				block := KVBytesPerTokenPerGPU(m, tp) * 16
				used := func(blocks int64) float64 { // GiB per GPU
					return (float64(blocks)*block+WeightParams(m)*m.WeightBytes/float64(tp))/bytesPerGiB + act/float64(tp) + nonTorch
				}
				budget := g.MemoryGiB * 0.9
				if u := used(blocks); u > budget {
					t.Errorf("%s on %d × %s: %d blocks need %.4f GiB per GPU, budget %.4f", name, tp, gpuName, blocks, u, budget)
				}
				if u := used(blocks + 1); u <= budget-1e-6 {
					t.Errorf("%s on %d × %s: one more block (%.4f GiB per GPU) would still fit in %.4f", name, tp, gpuName, u, budget)
				}
			}
		}
	}
	// Llama-3.1-8B at TP 8 on H100: (80·0.9·8 − 14.96 − 5.5 − 4.8) GiB over
	// 2 MiB blocks (131072 bytes/token for the whole group × 16) → 281980.
	m, _ := LookupModel("llama-3.1-8b-instruct")
	g, _ := LookupGPU("H100")
	if got, err := KVBlocks(m, g, 8, 0.9, 16); err != nil || got != 281980 {
		t.Errorf("llama-3.1-8b-instruct on 8 × H100: %d, %v; want 281980", got, err)
	}
	// Gemma's gated FFN (GeGLU, activation gelu_pytorch_tanh) has the three
	// matrices the weight estimate assumes: its capacity is computed.
	for _, name := range []string{"gemma-2-9b-it", "gemma-2-27b-it"} {
		m, _ := LookupModel(name)
		if got, err := KVBlocks(m, g, 1, 0.9, 16); err != nil || got < 1000 {
			t.Errorf("%s on one H100: %d blocks, %v; want its capacity", name, got, err)
		}
	}
}

func TestKVBlocksErrors(t *testing.T) {
	dense := mustModel(t, tinyDenseJSON)
	gelu := mustModel(t, strings.Replace(tinyDenseJSON, `"silu"`, `"gelu"`, 1))
	noVocab := mustModel(t, strings.Replace(tinyDenseJSON, `"vocab_size": 32,`, ``, 1))
	qwen, _ := LookupModel("qwen3-14b")
	big, _ := LookupModel("llama-3.1-70b-instruct")
	h100, _ := LookupGPU("H100")
	tests := []struct {
		name string
		m    *ModelConfig
		gpu  GPU
		tp   int
		util float64
		b    int
		want string
	}{
		{"non-SwiGLU activation", gelu, unitGPU, 1, 0.9, 16, `activation "gelu"; only gated FFNs`},
		{"does not fit", big, h100, 1, 0.9, 16, "does not fit on 1 × H100: 131.42 GiB weights"},
		{"utilisation 0", dense, unitGPU, 1, 0, 16, "utilization must be in (0, 1]"},
		{"utilisation above 1", dense, unitGPU, 1, 1.5, 16, "utilization must be in (0, 1]"},
		{"block size 0", dense, unitGPU, 1, 0.9, 0, "block size must be ≥ 1"},
		{"no GPU memory", dense, GPU{Name: "nomem", TFlopsPeak: 1, BwPeakTBs: 1}, 1, 0.9, 16, "has no MemoryGiB"},
		{"no vocab", noVocab, unitGPU, 1, 0.9, 16, "has no vocab_size"},
		{"TP not dividing heads", qwen, h100, 3, 0.9, 16, "not divisible by TP 3"},
	}
	for _, tt := range tests {
		_, err := KVBlocks(tt.m, tt.gpu, tt.tp, tt.util, tt.b)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

func TestMaxModelLen(t *testing.T) {
	withRope := func(rope string) *ModelConfig {
		return mustModel(t, strings.Replace(tinyDenseJSON, `"max_position_embeddings": 64`, `"max_position_embeddings": 64, "rope_scaling": `+rope, 1))
	}
	noMax := mustModel(t, strings.Replace(tinyDenseJSON, `, "max_position_embeddings": 64`, ``, 1))
	gemma := mustModel(t, strings.Replace(tinyDenseJSON, `"max_position_embeddings": 64`, `"max_position_embeddings": 64, "model_type": "gemma3_text", "rope_scaling": {"rope_type": "linear", "factor": 8}`, 1))
	embedded := func(name string) *ModelConfig {
		m, err := LookupModel(name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name   string
		m      *ModelConfig
		blocks int64
		b      int
		want   int64
	}{
		{"plain", mustModel(t, tinyDenseJSON), 100, 16, 64},
		{"capped at T·b", mustModel(t, tinyDenseJSON), 3, 16, 48},
		{"linear × factor", withRope(`{"rope_type": "linear", "factor": 2.0}`), 100, 16, 128},
		{"dynamic × factor (old 'type' key)", withRope(`{"type": "dynamic", "factor": 4}`), 100, 16, 256},
		{"mrope × factor", withRope(`{"rope_type": "mrope", "factor": 1.5}`), 100, 16, 96},
		{"default without factor", withRope(`{"rope_type": "default"}`), 100, 16, 64},
		{"yarn without original: × factor", withRope(`{"rope_type": "yarn", "factor": 2}`), 100, 16, 128},
		{"yarn with original: original × factor", withRope(`{"rope_type": "yarn", "factor": 2, "original_max_position_embeddings": 16}`), 100, 16, 32},
		{"llama3 not scaled", withRope(`{"rope_type": "llama3", "factor": 8}`), 100, 16, 64},
		{"longrope not scaled", withRope(`{"rope_type": "longrope", "factor": 8}`), 100, 16, 64},
		{"gemma3 already scaled", gemma, 100, 16, 64},
		{"model does not say: T·b", noMax, 7, 16, 112},
		{"no blocks", mustModel(t, tinyDenseJSON), 0, 16, 0},
		{"qwen3-14b", embedded("qwen3-14b"), 15909, 16, 40960},
		{"llama-3.1-8b-instruct", embedded("llama-3.1-8b-instruct"), 26312, 16, 131072},
		{"llama-3.1-70b-instruct (llama3 rope)", embedded("llama-3.1-70b-instruct"), 1 << 20, 16, 131072},
		{"deepseek-v2-lite (yarn 4096 × 40)", embedded("deepseek-v2-lite"), 1 << 20, 16, 163840},
		{"llama-3.1-8b-instruct small pool", embedded("llama-3.1-8b-instruct"), 1000, 16, 16000},
	}
	for _, tt := range tests {
		if got := MaxModelLen(tt.m, tt.blocks, tt.b); got != tt.want {
			t.Errorf("%s: MaxModelLen = %d, want %d", tt.name, got, tt.want)
		}
	}
}
