package latency

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseModelConfig(t *testing.T) {
	tests := []struct {
		name string
		json string
		want ModelConfig // Name is set from the test name
	}{
		{
			name: "dense defaults: n_kv = n_h, d_h = H/n_h, F = 4H, dtype absent = 2 bytes",
			json: `{"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "vocab_size": 100}`,
			want: ModelConfig{Hidden: 64, Layers: 3, Heads: 4, KVHeads: 4, HeadDim: 16, Vocab: 100, FFN: 256, ExpertFFN: 256,
				DtypeBytes: 2, WeightBytes: 2, RopeFactor: 1},
		},
		{
			name: "fallback names: num_kv_heads, ffn_hidden_size, dtype, float32",
			json: `{"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "num_kv_heads": 2, "ffn_hidden_size": 99, "dtype": "float32", "head_dim": 32}`,
			want: ModelConfig{Hidden: 64, Layers: 3, Heads: 4, KVHeads: 2, HeadDim: 32, FFN: 99, ExpertFFN: 99, DtypeBytes: 4, WeightBytes: 4, RopeFactor: 1},
		},
		{
			name: "multi_query_group_num (GLM) and int8",
			json: `{"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "multi_query_group_num": 1, "torch_dtype": "int8", "intermediate_size": 10}`,
			want: ModelConfig{Hidden: 64, Layers: 3, Heads: 4, KVHeads: 1, HeadDim: 16, FFN: 10, ExpertFFN: 10, DtypeBytes: 1, WeightBytes: 1, RopeFactor: 1},
		},
		{
			name: "text_config overrides the top level; quantization fp8; tied; activation",
			json: `{"torch_dtype": "float32", "hidden_size": 1, "quantization_config": {"quant_method": "fp8"},
				"text_config": {"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "torch_dtype": "bfloat16",
				"tie_word_embeddings": true, "hidden_act": "silu", "max_position_embeddings": 4096}}`,
			want: ModelConfig{Hidden: 64, Layers: 3, Heads: 4, KVHeads: 4, HeadDim: 16, FFN: 256, ExpertFFN: 256, DtypeBytes: 2, WeightBytes: 1,
				TieWordEmbeddings: true, HiddenAct: "silu", MaxPositionEmbeddings: 4096, RopeFactor: 1},
		},
		{
			name: "quantization bits (GPTQ 4-bit) and rope llama3",
			json: `{"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "torch_dtype": "float16",
				"quantization_config": {"quant_method": "gptq", "bits": 4},
				"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}}`,
			want: ModelConfig{Hidden: 64, Layers: 3, Heads: 4, KVHeads: 4, HeadDim: 16, FFN: 256, ExpertFFN: 256, DtypeBytes: 2, WeightBytes: 0.5,
				MaxPositionEmbeddings: 131072, RopeType: "llama3", RopeFactor: 8, RopeOriginalMax: 8192},
		},
		{
			name: "compressed-tensors: first config group in key order",
			json: `{"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
				"quantization_config": {"quant_method": "compressed-tensors", "config_groups": {
					"group_1": {"weights": {"num_bits": 4}}, "group_0": {"weights": {"num_bits": 8}}}}}`,
			want: ModelConfig{Hidden: 64, Layers: 3, Heads: 4, KVHeads: 4, HeadDim: 16, FFN: 256, ExpertFFN: 256, DtypeBytes: 2, WeightBytes: 1, RopeFactor: 1},
		},
		{
			name: "MoE Mixtral style: num_local_experts, expert FFN = intermediate_size, all layers MoE",
			json: `{"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "intermediate_size": 50,
				"num_local_experts": 8, "num_experts_per_tok": 2}`,
			want: ModelConfig{Hidden: 64, Layers: 3, Heads: 4, KVHeads: 4, HeadDim: 16, FFN: 50, ExpertFFN: 50, DtypeBytes: 2, WeightBytes: 2,
				Experts: 8, ExpertsPerToken: 2, MoELayers: 3, RopeFactor: 1},
		},
		{
			name: "MoE DeepSeek style: n_routed_experts, shared = n_shared × F_moe, first dense layer, MLA, yarn",
			json: `{"hidden_size": 64, "num_hidden_layers": 5, "num_attention_heads": 4, "intermediate_size": 50,
				"n_routed_experts": 16, "num_experts_per_tok": 4, "moe_intermediate_size": 12, "n_shared_experts": 2,
				"first_k_dense_replace": 1, "moe_layer_freq": 1, "kv_lora_rank": 32, "qk_rope_head_dim": 8,
				"max_position_embeddings": 163840,
				"rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096}}`,
			want: ModelConfig{Hidden: 64, Layers: 5, Heads: 4, KVHeads: 4, HeadDim: 16, FFN: 50, ExpertFFN: 12, SharedFFN: 24, DtypeBytes: 2, WeightBytes: 2,
				Experts: 16, ExpertsPerToken: 4, MoELayers: 4, KVLoraRank: 32, QKRopeHeadDim: 8,
				MaxPositionEmbeddings: 163840, RopeType: "yarn", RopeFactor: 40, RopeOriginalMax: 4096},
		},
		{
			name: "MoE Llama 4 style: interleave step 2, dense FFN from intermediate_size_mlp, explicit shared width",
			json: `{"hidden_size": 64, "num_hidden_layers": 6, "num_attention_heads": 4, "intermediate_size": 30, "intermediate_size_mlp": 70,
				"num_local_experts": 4, "num_experts_per_tok": 1, "interleave_moe_layer_step": 2, "shared_expert_intermediate_size": 9}`,
			want: ModelConfig{Hidden: 64, Layers: 6, Heads: 4, KVHeads: 4, HeadDim: 16, FFN: 70, ExpertFFN: 30, SharedFFN: 9, DtypeBytes: 2, WeightBytes: 2,
				Experts: 4, ExpertsPerToken: 1, InterleaveMoEStep: 2, MoELayers: 3, RopeFactor: 1},
		},
		{
			name: "Qwen MoE style: num_experts, mlp_only_layers; single expert is dense",
			json: `{"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "num_experts": 4, "num_experts_per_tok": 2,
				"moe_intermediate_size": 8, "decoder_sparse_step": 1, "mlp_only_layers": [0, 2]}`,
			want: ModelConfig{Hidden: 64, Layers: 4, Heads: 4, KVHeads: 4, HeadDim: 16, FFN: 256, ExpertFFN: 8, DtypeBytes: 2, WeightBytes: 2,
				Experts: 4, ExpertsPerToken: 2, MoELayers: 2, RopeFactor: 1},
		},
		{
			name: "no max_position_embeddings: smallest of vLLM's other keys; nulls are absent",
			json: `{"hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "head_dim": null, "rope_scaling": null,
				"n_positions": 2048, "seq_length": 1024, "model_max_length": 1e30}`,
			want: ModelConfig{Hidden: 64, Layers: 3, Heads: 4, KVHeads: 4, HeadDim: 16, FFN: 256, ExpertFFN: 256, DtypeBytes: 2, WeightBytes: 2,
				MaxPositionEmbeddings: 1024, RopeFactor: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseModelConfig("m", []byte(tt.json))
			if err != nil {
				t.Fatalf("ParseModelConfig: %v", err)
			}
			want := tt.want
			want.Name = "m"
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}

func TestParseModelConfigErrors(t *testing.T) {
	tests := []struct{ json, want string }{
		{`[1, 2]`, "invalid JSON"},
		{`null`, "not a JSON object"},
		{`{"num_hidden_layers": 2, "num_attention_heads": 2}`, "hidden_size is missing"},
		{`{"hidden_size": 8, "num_attention_heads": 2}`, "num_hidden_layers is missing"},
		{`{"hidden_size": 8, "num_hidden_layers": 2}`, "num_attention_heads is missing"},
		{`{"hidden_size": 9, "num_hidden_layers": 2, "num_attention_heads": 2}`, "not a multiple"},
		{`{"hidden_size": 8.5, "num_hidden_layers": 2, "num_attention_heads": 2}`, "hidden_size: 8.5 is not an integer"},
		{`{"hidden_size": -8, "num_hidden_layers": 2, "num_attention_heads": 2}`, "is not an integer in"},
		{`{"hidden_size": "8", "num_hidden_layers": 2, "num_attention_heads": 2}`, "hidden_size: 8 is not a number"},
		{`{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "torch_dtype": "float64x"}`, `unknown dtype "float64x"`},
		{`{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_local_experts": 8}`, "num_experts_per_tok is missing"},
		{`{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "num_local_experts": 2, "num_experts_per_tok": 3}`, "exceeds the 2 experts"},
		{`{"hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2, "rope_scaling": {"factor": -1}}`, "rope_scaling.factor"},
	}
	for _, tt := range tests {
		_, err := ParseModelConfig("m", []byte(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseModelConfig(%s): got error %v, want one containing %q", tt.json, err, tt.want)
		}
	}
}

func TestEmbeddedModels(t *testing.T) {
	want := []string{
		"codellama-34b-instruct-hf", "deepseek-v2-lite", "gemma-2-27b-it", "gemma-2-9b-it", "glm-5.2-fp8",
		"llama-2-13b-chat-hf", "llama-2-70b-chat-hf", "llama-2-7b-chat-hf", "llama-2-7b-hf",
		"llama-3-70b-instruct", "llama-3-8b-instruct", "llama-3.1-70b-instruct", "llama-3.1-8b-instruct",
		"llama-3.2-1b-instruct", "llama-3.2-3b-instruct", "llama-3.3-70b-instruct",
		"llama-4-scout-17b-16e-instruct-fp8-dynamic", "mistral-7b-instruct-v0.3", "mistral-nemo-instruct-2407",
		"mixtral-8x22b-instruct-v0.1", "mixtral-8x22b-v0.1", "mixtral-8x7b-instruct-v0.1", "mixtral-8x7b-v0.1",
		"qwen2.5-14b-instruct", "qwen2.5-32b-instruct", "qwen2.5-72b-instruct", "qwen2.5-7b-instruct",
		"qwen3-14b", "qwen3-235b-a22b", "qwen3-30b-a3b", "qwen3-32b", "qwen3-8b", "yi-34b",
	}
	if got := KnownModels(); !slices.Equal(got, want) {
		t.Fatalf("KnownModels() = %v, want %v", got, want)
	}
	for _, n := range want {
		if _, err := LookupModel(n); err != nil {
			t.Errorf("LookupModel(%q): %v", n, err)
		}
	}
	// Spot checks of parsed fields of real configs.
	scout, err := LookupModel("llama-4-scout-17b-16e-instruct-fp8-dynamic")
	if err != nil {
		t.Fatal(err)
	}
	if scout.Hidden != 5120 || scout.WeightBytes != 1 || scout.DtypeBytes != 2 || scout.Experts != 16 || scout.FFN != 16384 || scout.ExpertFFN != 8192 || scout.MoELayers != 48 || scout.SharedFFN != 8192 {
		t.Errorf("scout parsed as %+v; want text_config merged, 1-byte weights, 16 experts, FFN 16384/8192, a shared expert of 8192, 48 MoE layers", *scout)
	}
	glm, err := LookupModel("glm-5.2-fp8")
	if err != nil {
		t.Fatal(err)
	}
	if glm.WeightBytes != 1 || glm.HeadDim != 192 || glm.MoELayers != 75 || glm.SharedFFN != 2048 || !glm.IsMLA() {
		t.Errorf("glm parsed as %+v; want fp8 weights, head_dim 192, 75 MoE layers, shared 2048, MLA", *glm)
	}
}

func TestLookupModelNames(t *testing.T) {
	tests := []struct{ in, want string }{
		{"qwen3-14b", "qwen3-14b"},
		{"Qwen/Qwen3-14B", "qwen3-14b"},
		{"QWEN3-14B", "qwen3-14b"},
		{"meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"},
		{"meta-llama/Meta-Llama-3.1-8B-Instruct", "llama-3.1-8b-instruct"},
		{"RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic", "llama-4-scout-17b-16e-instruct-fp8-dynamic"},
		{"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b-v0.1"},
		{"meta-llama/Llama-2-70b-chat-hf", "llama-2-70b-chat-hf"},
		{"meta-llama/Llama-2-70b-hf", "llama-2-70b-chat-hf"},
		{"llama-2-70b", "llama-2-70b-chat-hf"},
		{"meta-llama/Meta-Llama-3-8B-Instruct", "llama-3-8b-instruct"},
		{"meta-llama/Meta-Llama-3-70B", "llama-3-70b-instruct"},
		{"meta-llama/Llama-3.1-8B", "llama-3.1-8b-instruct"},
		{"meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct"},
		{"meta-llama/Llama-3.2-1B-Instruct", "llama-3.2-1b-instruct"},
		{"Qwen/Qwen2.5-72B-Instruct", "qwen2.5-72b-instruct"},
		{"qwen2.5-32b", "qwen2.5-32b-instruct"},
		{"Qwen/Qwen3-32B", "qwen3-32b"},
		{"mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b-instruct-v0.1"},
		{"mixtral-8x22b", "mixtral-8x22b-v0.1"},
		{"mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b-instruct-v0.3"},
		{"google/gemma-2-27b-it", "gemma-2-27b-it"},
		{"deepseek-ai/DeepSeek-V2-Lite-Chat", "deepseek-v2-lite"},
	}
	for _, tt := range tests {
		m, err := LookupModel(tt.in)
		if err != nil {
			t.Errorf("LookupModel(%q): %v", tt.in, err)
			continue
		}
		if m.Name != tt.want {
			t.Errorf("LookupModel(%q).Name = %q, want %q", tt.in, m.Name, tt.want)
		}
	}
}

func TestUnknownModelAndGPU(t *testing.T) {
	_, err := LookupModel("gpt-5")
	if err == nil {
		t.Fatal("LookupModel(gpt-5): no error")
	}
	msg := err.Error()
	for _, n := range KnownModels() {
		if !strings.Contains(msg, n) {
			t.Errorf("unknown-model error does not list %q: %s", n, msg)
		}
	}
	if !strings.Contains(msg, `"gpt-5"`) || !strings.Contains(msg, "config.json") {
		t.Errorf("unknown-model error should name the input and say how to pass a config.json: %s", msg)
	}

	_, err = LookupGPU("B200")
	if err == nil {
		t.Fatal("LookupGPU(B200): no error")
	}
	msg = err.Error()
	for _, n := range []string{"A100-80", "A100-SXM", "H100", "L40S"} {
		if !strings.Contains(msg, n) {
			t.Errorf("unknown-GPU error does not list %q: %s", n, msg)
		}
	}
	if !strings.Contains(msg, `"B200"`) || !strings.Contains(msg, "hardware JSON") {
		t.Errorf("unknown-GPU error should name the input and say how to pass a hardware file: %s", msg)
	}

	// The factory surfaces the same errors.
	if _, err := New(Config{Model: "gpt-5", GPU: "H100"}); err == nil || !strings.Contains(err.Error(), "qwen3-14b") {
		t.Errorf("New with unknown model: got %v, want the known-model list", err)
	}
	if _, err := New(Config{Model: "qwen3-14b", GPU: "B200"}); err == nil || !strings.Contains(err.Error(), "L40S") {
		t.Errorf("New with unknown GPU: got %v, want the known-GPU list", err)
	}
}

func TestEmbeddedGPUs(t *testing.T) {
	want := map[string]GPU{
		"h100":     {Name: "H100", TFlopsPeak: 989.5, TFlopsFP8: 1979, BwPeakTBs: 3.35, MfuPrefill: 0.45, MfuDecode: 0.30, MemoryGiB: 80},
		"A100-SXM": {Name: "A100-SXM", TFlopsPeak: 312, BwPeakTBs: 2.039, MfuPrefill: 0.38, MfuDecode: 0.18, MemoryGiB: 80},
		"a100-80":  {Name: "A100-80", TFlopsPeak: 312, BwPeakTBs: 2.039, MfuPrefill: 0.38, MfuDecode: 0.18, MemoryGiB: 80},
		"L40S":     {Name: "L40S", TFlopsPeak: 362.05, TFlopsFP8: 1466, BwPeakTBs: 0.864, MfuPrefill: 0.32, MfuDecode: 0.08, MemoryGiB: 48},
	}
	for in, w := range want {
		got, err := LookupGPU(in)
		if err != nil {
			t.Errorf("LookupGPU(%q): %v", in, err)
			continue
		}
		if got != w {
			t.Errorf("LookupGPU(%q) = %+v, want %+v", in, got, w)
		}
	}
}

func TestLoadFiles(t *testing.T) {
	// A model config from a directory, from the file, and through ResolveModel.
	for _, ref := range []string{"testdata/tiny-model", "testdata/tiny-model/config.json"} {
		m, err := ResolveModel(ref)
		if err != nil {
			t.Fatalf("ResolveModel(%q): %v", ref, err)
		}
		if m.Name != "tiny-model" || m.Hidden != 8 || m.KVHeads != 1 || m.FFN != 16 || m.Vocab != 32 {
			t.Errorf("ResolveModel(%q) = %+v", ref, *m)
		}
	}
	if _, err := ResolveModel("testdata/missing.json"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("ResolveModel(missing.json): got %v", err)
	}
	// A copy under another file name takes that name.
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/tiny-model/config.json")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "My-Model.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := LoadModelConfig(p); err != nil || m.Name != "my-model" {
		t.Errorf("LoadModelConfig(%s) = %v, %v; want name my-model", p, m, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"hidden_size": 8}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadModelConfig(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("LoadModelConfig(bad): got %v, want an error naming the file", err)
	}

	// Hardware files: a map (pick by name, case-insensitive) and a single object.
	g, err := ResolveGPU("UNIT", "testdata/gpus.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := (GPU{Name: "unit", TFlopsPeak: 1e-6, BwPeakTBs: 1e-6, MfuPrefill: 0.5, MfuDecode: 0.25, MemoryGiB: 8}); g != want {
		t.Errorf("ResolveGPU(UNIT, gpus.json) = %+v, want %+v", g, want)
	}
	if _, err := ResolveGPU("", "testdata/gpus.json"); err == nil || !strings.Contains(err.Error(), "fast-compute, unit") {
		t.Errorf("ResolveGPU without a name in a two-GPU file: got %v", err)
	}
	if _, err := ResolveGPU("H100", "testdata/gpus.json"); err == nil || !strings.Contains(err.Error(), "fast-compute, unit") {
		t.Errorf("ResolveGPU(H100) in a file without it: got %v", err)
	}
	g, err = ResolveGPU("testdata/single-gpu.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := (GPU{Name: "single-gpu", TFlopsPeak: 100, TFlopsFP8: 200, BwPeakTBs: 1.5, MfuPrefill: 0.4, MfuDecode: 0.2, MemoryGiB: 24}); g != want {
		t.Errorf("ResolveGPU(single-gpu.json) = %+v, want %+v", g, want)
	}
}

func TestParseGPUsErrors(t *testing.T) {
	tests := []struct{ json, want string }{
		{`{"X": {"TFlopsPeak": 1, "BwPeakTBs": 1, "TflopsFP8": 2}}`, `unknown key "TflopsFP8"`},
		{`{"X": {"TFlopsPeak": 0, "BwPeakTBs": 1}}`, "TFlopsPeak must be a positive number"},
		{`{"X": {"TFlopsPeak": 1}}`, "BwPeakTBs must be a positive number"},
		{`{"X": {"TFlopsPeak": 1, "BwPeakTBs": 1, "MemoryGiB": -1}}`, "MemoryGiB must be a finite non-negative"},
		{`{"X": {"TFlopsPeak": "fast", "BwPeakTBs": 1}}`, "TFlopsPeak: not a number"},
		{`{"X": 3}`, "not an object"},
		{`{"_comment": "nothing"}`, "no GPU entries"},
		{`[]`, "invalid JSON"},
	}
	for _, tt := range tests {
		_, err := ParseGPUs("", []byte(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseGPUs(%s): got %v, want an error containing %q", tt.json, err, tt.want)
		}
	}
}

// TestModelAliases: every alias names an embedded model and none hides one.
func TestModelAliases(t *testing.T) {
	known := KnownModels()
	for alias, name := range ModelAliases() {
		if !slices.Contains(known, name) {
			t.Errorf("alias %q names %q, which is not embedded", alias, name)
		}
		if slices.Contains(known, alias) {
			t.Errorf("alias %q is itself an embedded model", alias)
		}
	}
}
