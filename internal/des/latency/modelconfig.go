package latency

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"servesim/internal/infile"
)

// ModelConfig is the architecture of a decoder-only transformer as the latency
// models and the KV capacity computation need it, read from a HuggingFace
// config.json (docs/simulator.md §8.2). All counts are for the whole model, not per GPU.
type ModelConfig struct {
	Name      string // lower-case model name (embedded name, or from the file path)
	ModelType string // model_type, informational

	Hidden  int // H: hidden_size
	Layers  int // L: num_hidden_layers
	Heads   int // n_h: num_attention_heads
	KVHeads int // n_kv: num_key_value_heads, num_kv_heads, multi_query_group_num; default n_h
	HeadDim int // d_h: head_dim, default H/n_h
	Vocab   int // vocab_size (0 = unknown; needed only for KV capacity)

	// FFN is the width of a dense layer's FFN: intermediate_size_mlp (dense
	// layers of interleaved MoE models such as Llama 4), else
	// intermediate_size, else ffn_hidden_size, else 4H.
	FFN int

	DtypeBytes  float64 // bytes per activation / KV element (torch_dtype or dtype; 2 when absent)
	WeightBytes float64 // bytes per weight parameter: quantization_config when present, else DtypeBytes
	// KVDtypeBytes is the bytes of a KV-cache element when the server
	// stores the cache in another type (vLLM's --kv-cache-dtype); 0 =
	// DtypeBytes.
	KVDtypeBytes float64

	// Mixture of experts. Experts ≤ 1 means dense.
	Experts           int // N: num_local_experts, num_experts, n_routed_experts, num_routed_experts
	ExpertsPerToken   int // k: num_experts_per_tok
	ExpertFFN         int // F_moe: moe_intermediate_size, else intermediate_size
	SharedFFN         int // total width of always-active shared experts (0 = none)
	InterleaveMoEStep int // interleave_moe_layer_step (0 = not interleaved)
	// MoELayers is the number of layers whose FFN is an MoE block, counted
	// the way the model code does it (first_k_dense_replace,
	// interleave_moe_layer_step / decoder_sparse_step / moe_layer_freq,
	// mlp_only_layers). Zero for dense models.
	MoELayers int

	// Multi-head latent attention (DeepSeek style): KV cache holds a latent of
	// KVLoraRank + QKRopeHeadDim elements per token and layer.
	KVLoraRank    int
	QKRopeHeadDim int

	TieWordEmbeddings bool   // lm_head shares the embedding matrix
	HiddenAct         string // hidden_act (or hidden_activation)

	// MaxPositionEmbeddings is max_position_embeddings, or the smallest of the
	// other length keys vLLM reads when it is absent; 0 when the model does
	// not say.
	MaxPositionEmbeddings int
	RopeType              string  // rope_scaling.rope_type (or .type); "" when absent
	RopeFactor            float64 // rope_scaling.factor; 1 when absent
	RopeOriginalMax       int     // rope_scaling.original_max_position_embeddings; 0 when absent
}

// IsMoE reports whether the model routes tokens to more than one expert.
func (m *ModelConfig) IsMoE() bool { return m.Experts > 1 }

// IsMLA reports whether the model caches a compressed latent (MLA).
func (m *ModelConfig) IsMLA() bool { return m.KVLoraRank > 0 }

// KVDim is d_kv = n_kv·d_h, the width of one of K or V per token and layer.
func (m *ModelConfig) KVDim() int { return m.KVHeads * m.HeadDim }

// DenseLayers is the number of layers with a dense FFN.
func (m *ModelConfig) DenseLayers() int { return m.Layers - m.MoELayers }

// maxDim bounds every integer field so that products of a few of them stay
// far inside float64's exact integer range and int64.
const maxDim = 1 << 24

// LoadModelConfig reads a HuggingFace config.json. path may name the file or
// the directory that holds it (a local model snapshot). The model's name is
// the file's base name without ".json", or for "config.json" the name of its
// directory, lower-cased.
func LoadModelConfig(path string) (*ModelConfig, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, "config.json")
	}
	data, err := infile.ReadFile(file, infile.ConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("model config: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(file), ".json")
	if name == "config" {
		name = filepath.Base(filepath.Dir(file))
	}
	mc, err := ParseModelConfig(strings.ToLower(name), data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return mc, nil
}

// ParseModelConfig parses the JSON text of a HuggingFace config.json (docs/simulator.md §8.2).
// Keys of a nested text_config (multimodal models) override top-level ones.
func ParseModelConfig(name string, data []byte) (*ModelConfig, error) {
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("model config: invalid JSON: %w", err)
	}
	if raw == nil {
		return nil, fmt.Errorf("model config: top level is not a JSON object")
	}
	if tc, ok := raw["text_config"].(map[string]any); ok {
		for k, v := range tc {
			raw[k] = v
		}
	}
	m := &ModelConfig{Name: name}
	keys, err := m.readKeys(raw)
	if err != nil {
		return nil, fmt.Errorf("model config: %w", err)
	}
	if err := m.complete(raw, keys); err != nil {
		return nil, fmt.Errorf("model config: %w", err)
	}
	return m, nil
}

// shapeKeys are the config.json values that shape a [ModelConfig] without
// being fields of it: the FFN width the others default to, and the keys
// that say which layers are MoE layers.
type shapeKeys struct {
	intermediate                               int
	nShared, firstDense, sparseStep, layerFreq int
	mlpOnly                                    []int
}

// readKeys reads the HuggingFace keys into m, each under its known aliases.
func (m *ModelConfig) readKeys(raw map[string]any) (shapeKeys, error) {
	p := hfParser{raw: raw}
	m.ModelType, _ = raw["model_type"].(string)

	m.Hidden = p.first("hidden_size")
	m.Layers = p.first("num_hidden_layers")
	m.Heads = p.first("num_attention_heads")
	m.KVHeads = p.first("num_key_value_heads", "num_kv_heads", "multi_query_group_num")
	m.HeadDim = p.first("head_dim")
	m.Vocab = p.first("vocab_size")
	var k shapeKeys
	k.intermediate = p.first("intermediate_size", "ffn_hidden_size")
	m.FFN = p.first("intermediate_size_mlp")
	m.Experts = p.first("num_local_experts", "num_experts", "n_routed_experts", "num_routed_experts")
	m.ExpertsPerToken = p.first("num_experts_per_tok")
	m.ExpertFFN = p.first("moe_intermediate_size")
	m.SharedFFN = p.first("shared_expert_intermediate_size")
	k.nShared = p.first("n_shared_experts")
	m.InterleaveMoEStep = p.first("interleave_moe_layer_step")
	k.firstDense = p.first("first_k_dense_replace")
	k.sparseStep = p.first("decoder_sparse_step")
	k.layerFreq = p.first("moe_layer_freq")
	k.mlpOnly = p.intList("mlp_only_layers")
	m.KVLoraRank = p.first("kv_lora_rank")
	m.QKRopeHeadDim = p.first("qk_rope_head_dim")
	m.MaxPositionEmbeddings = lengthKey(raw, "max_position_embeddings")
	if m.MaxPositionEmbeddings == 0 {
		// vLLM's other length keys; it takes the smallest present.
		for _, key := range []string{"n_positions", "max_seq_len", "seq_length", "max_sequence_length", "max_seq_length", "seq_len", "model_max_length"} {
			if v := lengthKey(raw, key); v > 0 && (m.MaxPositionEmbeddings == 0 || v < m.MaxPositionEmbeddings) {
				m.MaxPositionEmbeddings = v
			}
		}
	}
	return k, p.err
}

// complete checks the keys read into m, fills in what vLLM derives when a
// key is absent, and reads the dtype, quantisation, MoE layout, activation
// and RoPE settings.
func (m *ModelConfig) complete(raw map[string]any, k shapeKeys) error {
	for _, f := range []struct {
		key string
		v   int
	}{{"hidden_size", m.Hidden}, {"num_hidden_layers", m.Layers}, {"num_attention_heads", m.Heads}} {
		if f.v <= 0 {
			return fmt.Errorf("%s is missing or not positive", f.key)
		}
	}
	if m.KVHeads == 0 {
		m.KVHeads = m.Heads
	}
	if m.HeadDim == 0 {
		if m.Hidden%m.Heads != 0 {
			return fmt.Errorf("hidden_size %d is not a multiple of num_attention_heads %d and head_dim is absent", m.Hidden, m.Heads)
		}
		m.HeadDim = m.Hidden / m.Heads
	}
	intermediate := k.intermediate
	if intermediate == 0 {
		intermediate = 4 * m.Hidden
	}
	if m.FFN == 0 {
		m.FFN = intermediate
	}
	if m.ExpertFFN == 0 {
		m.ExpertFFN = intermediate
	}

	var err error
	if m.DtypeBytes, err = dtypeBytes(raw); err != nil {
		return err
	}
	m.WeightBytes = m.DtypeBytes
	if qc, ok := raw["quantization_config"].(map[string]any); ok {
		if wb := quantWeightBytes(qc); wb > 0 {
			m.WeightBytes = wb
		}
	}

	if m.Experts > 1 {
		if m.ExpertsPerToken <= 0 {
			return fmt.Errorf("%d experts but num_experts_per_tok is missing", m.Experts)
		}
		if m.ExpertsPerToken > m.Experts {
			return fmt.Errorf("num_experts_per_tok %d exceeds the %d experts", m.ExpertsPerToken, m.Experts)
		}
		if m.SharedFFN == 0 && k.nShared > 0 {
			m.SharedFFN = k.nShared * m.ExpertFFN
		}
		if m.SharedFFN == 0 && strings.HasPrefix(m.ModelType, "llama4") {
			// Every Llama 4 MoE layer holds one shared expert as wide as a
			// routed one (intermediate_size); its config has no key for it.
			m.SharedFFN = m.ExpertFFN
		}
		m.MoELayers = countMoELayers(m.Layers, k.firstDense, m.InterleaveMoEStep, k.sparseStep, k.layerFreq, k.mlpOnly)
	} else {
		m.Experts, m.ExpertsPerToken, m.SharedFFN, m.InterleaveMoEStep = 0, 0, 0, 0
	}

	m.HiddenAct, _ = raw["hidden_act"].(string)
	if m.HiddenAct == "" {
		m.HiddenAct, _ = raw["hidden_activation"].(string)
	}
	if v, ok := raw["tie_word_embeddings"].(bool); ok {
		m.TieWordEmbeddings = v
	}
	return m.parseRope(raw)
}

// countMoELayers counts the layers whose FFN is an MoE block. Layer i (from 0)
// is MoE when i ≥ first_k_dense_replace, i % moe_layer_freq == 0 (DeepSeek),
// (i+1) % step == 0 for the interleave step of Llama 4 or Qwen's
// decoder_sparse_step, and i is not in mlp_only_layers.
func countMoELayers(layers, firstDense, interleave, sparseStep, layerFreq int, mlpOnly []int) int {
	step := max(interleave, sparseStep, 1)
	freq := max(layerFreq, 1)
	n := 0
	for i := firstDense; i < layers; i++ {
		if i%freq == 0 && (i+1)%step == 0 && !slices.Contains(mlpOnly, i) {
			n++
		}
	}
	return n
}

func (m *ModelConfig) parseRope(raw map[string]any) error {
	m.RopeFactor = 1
	rs, ok := raw["rope_scaling"].(map[string]any)
	if !ok {
		rs, ok = raw["rope_parameters"].(map[string]any) // transformers ≥ 5 name
	}
	if !ok {
		return nil
	}
	m.RopeType, _ = rs["rope_type"].(string)
	if m.RopeType == "" {
		m.RopeType, _ = rs["type"].(string)
	}
	m.RopeType = strings.ToLower(m.RopeType)
	if f, ok := rs["factor"].(float64); ok {
		if !(f > 0) || math.IsInf(f, 0) {
			return fmt.Errorf("rope_scaling.factor %v is not a positive number", f)
		}
		m.RopeFactor = f
	}
	m.RopeOriginalMax = lengthKey(rs, "original_max_position_embeddings")
	return nil
}

// dtypeBytes maps torch_dtype (or dtype) to bytes per element: float32 4,
// float16/bfloat16 2, 8-bit and 4-bit storage types 1. A config without a
// dtype is taken as 16-bit, which is what vLLM serves by default.
func dtypeBytes(raw map[string]any) (float64, error) {
	s, ok := raw["torch_dtype"].(string)
	if !ok {
		s, ok = raw["dtype"].(string)
	}
	if !ok {
		return 2, nil
	}
	switch strings.TrimPrefix(strings.ToLower(s), "torch.") {
	case "float32", "float", "fp32":
		return 4, nil
	case "float16", "bfloat16", "half", "fp16", "bf16":
		return 2, nil
	case "int8", "uint8", "fp8", "int4", "nf4", "float8_e4m3fn", "float8_e5m2":
		return 1, nil
	}
	return 0, fmt.Errorf("unknown dtype %q (known: float32, float16, bfloat16, int8, uint8, fp8, int4, nf4)", s)
}

// quantWeightBytes reads the stored weight precision from a
// quantization_config: an explicit "bits" (GPTQ, AWQ), quant_method "fp8",
// compressed-tensors' config_groups.*.weights.num_bits (first group in sorted
// key order), or bitsandbytes' load_in_4bit / load_in_8bit. It returns 0 when
// it cannot tell, in which case the dtype applies.
func quantWeightBytes(qc map[string]any) float64 {
	if b, ok := qc["bits"].(float64); ok && b > 0 && b <= 64 {
		return b / 8
	}
	method, _ := qc["quant_method"].(string)
	switch strings.ToLower(method) {
	case "fp8":
		return 1
	case "compressed-tensors":
		groups, _ := qc["config_groups"].(map[string]any)
		keys := make([]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			g, _ := groups[k].(map[string]any)
			w, _ := g["weights"].(map[string]any)
			if nb, ok := w["num_bits"].(float64); ok && nb > 0 && nb <= 64 {
				return nb / 8
			}
		}
	case "bitsandbytes":
		if v, _ := qc["load_in_4bit"].(bool); v {
			return 0.5
		}
		if v, _ := qc["load_in_8bit"].(bool); v {
			return 1
		}
	}
	return 0
}

// hfParser reads integer fields of a decoded config, remembering the first
// malformed one.
type hfParser struct {
	raw map[string]any
	err error
}

// first returns the first of keys holding a non-zero integer, or 0. JSON null
// counts as absent.
func (p *hfParser) first(keys ...string) int {
	for _, k := range keys {
		v, ok := p.raw[k]
		if !ok || v == nil {
			continue
		}
		n, ok := v.(float64)
		if !ok {
			if _, isList := v.([]any); isList && k == "num_key_value_heads" {
				continue // per-layer lists (rare) fall back to the other keys
			}
			p.fail(fmt.Errorf("%s: %v is not a number", k, v))
			return 0
		}
		if n != math.Trunc(n) || n < 0 || n > maxDim {
			p.fail(fmt.Errorf("%s: %v is not an integer in [0, %d]", k, n, maxDim))
			return 0
		}
		if n != 0 {
			return int(n)
		}
	}
	return 0
}

// maxLength caps context lengths read from a config (some tokenizer-derived
// keys hold absurd sentinels such as 1e30).
const maxLength = 1 << 40

// lengthKey reads a context-length key leniently: anything but a positive
// number counts as absent, and values are capped at maxLength.
func lengthKey(raw map[string]any, key string) int {
	f, ok := raw[key].(float64)
	if !ok || !(f >= 1) {
		return 0
	}
	return int(min(f, maxLength))
}

func (p *hfParser) intList(key string) []int {
	list, _ := p.raw[key].([]any)
	out := make([]int, 0, len(list))
	for _, v := range list {
		if n, ok := v.(float64); ok && n >= 0 && n <= maxDim && n == math.Trunc(n) {
			out = append(out, int(n))
		}
	}
	return out
}

func (p *hfParser) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}
