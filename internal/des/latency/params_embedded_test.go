package latency

import (
	"math"
	"testing"
)

// TestEmbeddedModelSizes: every embedded config parses, and the parameters
// its architecture implies are within 4% of the size its publisher
// advertises, so a mistyped width, layer count or expert count shows. The
// count is worked out here, independently of WeightParams (the KV-capacity
// estimate, which takes the attention width as H): embeddings V·H (twice
// unless tied), per layer q and o 2·H·n_h·d_h plus k and v 2·H·d_kv, per
// dense layer 3·H·F, per MoE layer N·3·H·F_moe + 3·H·F_shared + N·H.
// Norms and biases are left out (well under 0.1%); MLA attention is counted
// as if it were multi-head (under 1% of DeepSeek-V2-Lite).
func TestEmbeddedModelSizes(t *testing.T) {
	advertisedB := map[string]float64{
		"codellama-34b-instruct-hf":                  34,
		"deepseek-v2-lite":                           15.7,
		"gemma-2-27b-it":                             27.2,
		"gemma-2-9b-it":                              9.24,
		"glm-5.2-fp8":                                744,
		"llama-2-13b-chat-hf":                        13,
		"llama-2-70b-chat-hf":                        70,
		"llama-2-7b-chat-hf":                         7,
		"llama-2-7b-hf":                              7,
		"llama-3-70b-instruct":                       70.6,
		"llama-3-8b-instruct":                        8.03,
		"llama-3.1-70b-instruct":                     70.6,
		"llama-3.1-8b-instruct":                      8.03,
		"llama-3.2-1b-instruct":                      1.23,
		"llama-3.2-3b-instruct":                      3.21,
		"llama-3.3-70b-instruct":                     70.6,
		"llama-4-scout-17b-16e-instruct-fp8-dynamic": 109, // with its 1B vision encoder
		"mistral-7b-instruct-v0.3":                   7.25,
		"mistral-nemo-instruct-2407":                 12.2,
		"mixtral-8x22b-instruct-v0.1":                141,
		"mixtral-8x22b-v0.1":                         141,
		"mixtral-8x7b-instruct-v0.1":                 46.7,
		"mixtral-8x7b-v0.1":                          46.7,
		"qwen2.5-14b-instruct":                       14.7,
		"qwen2.5-32b-instruct":                       32.5,
		"qwen2.5-72b-instruct":                       72.7,
		"qwen2.5-7b-instruct":                        7.61,
		"qwen3-14b":                                  14.8,
		"qwen3-235b-a22b":                            235,
		"qwen3-30b-a3b":                              30.5,
		"qwen3-32b":                                  32.8,
		"qwen3-8b":                                   8.2,
		"yi-34b":                                     34.4,
	}
	known := KnownModels()
	if len(known) != len(advertisedB) {
		t.Errorf("%d embedded models, %d advertised sizes: give every embedded model its size here", len(known), len(advertisedB))
	}
	for _, n := range known {
		m, err := LookupModel(n)
		if err != nil {
			t.Errorf("LookupModel(%q): %v", n, err)
			continue
		}
		want, ok := advertisedB[n]
		if !ok {
			t.Errorf("%s: no advertised size", n)
			continue
		}
		got := countParams(m) / 1e9
		if math.Abs(got/want-1) > 0.04 {
			t.Errorf("%s: %.2fB parameters from its config, advertised %.4gB", n, got, want)
		}
	}
}

func countParams(m *ModelConfig) float64 {
	L, H, V := float64(m.Layers), float64(m.Hidden), float64(m.Vocab)
	q := float64(m.Heads * m.HeadDim)
	p := V * H
	if !m.TieWordEmbeddings {
		p += V * H
	}
	p += L * (2*H*q + 2*H*float64(m.KVDim()))
	p += float64(m.DenseLayers()) * 3 * H * float64(m.FFN)
	if m.IsMoE() {
		N := float64(m.Experts)
		p += float64(m.MoELayers) * (N*3*H*float64(m.ExpertFFN) + 3*H*float64(m.SharedFFN) + N*H)
	}
	return p
}
