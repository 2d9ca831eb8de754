package gguf

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Vocabulary of the generated model: one token per byte value (id = byte),
// then two control tokens.
const (
	// VocabSize is the number of tokens: 256 bytes, BOS, EOS.
	VocabSize = 258
	// BOSID is the id of the beginning-of-sequence control token.
	BOSID = 256
	// EOSID is the id of the end-of-sequence control token.
	EOSID = 257
)

// Steering constants of the generated model (see NewLlama).
const (
	// BiasChannel is the value every token embedding holds in dimension 0.
	// No layer writes to that dimension, so it reaches the output norm intact
	// and acts as the constant input a bias would need.
	BiasChannel = 256
	// Suppression is minus the dimension-0 weight of the output row of every
	// token that must never be sampled: its logit is −Suppression × n0, where
	// n0 > 0 is dimension 0 of the normalized final hidden state.
	Suppression = 50
	// outputScale bounds the other weights of an allowed token's output row.
	outputScale = 0.1
	// writeScale shrinks the matrices that write into the residual stream
	// (attention output, FFN down) against the usual 1/sqrt(fan-in), which
	// keeps the residual small next to BiasChannel (see the bound in the
	// tests).
	writeScale = 0.01
)

// LlamaConfig is the shape of the generated model.
type LlamaConfig struct {
	// Name is general.name.
	Name string
	// Embed is the embedding width; Heads must divide it.
	Embed int
	// Layers is the number of transformer blocks.
	Layers int
	// Heads and KVHeads are the query and key/value head counts (KVHeads
	// divides Heads; fewer KV heads than query heads is grouped-query
	// attention).
	Heads, KVHeads int
	// FFN is the feed-forward width.
	FFN int
	// Context is llama.context_length, the longest sequence the server
	// accepts per slot.
	Context int
	// Seed fixes every weight.
	Seed uint64
}

// DefaultLlama is the shape the end-to-end tests serve: 256 wide, 4 layers,
// 4 heads, 768 FFN, 4096 context, about 14 MB of F32 weights.
func DefaultLlama() LlamaConfig {
	return LlamaConfig{Name: "servesim-tiny", Embed: 256, Layers: 4, Heads: 4, KVHeads: 4, FFN: 768, Context: 4096, Seed: 1}
}

func (c LlamaConfig) validate() error {
	switch {
	case c.Embed < 8 || c.Embed > 1<<14:
		return fmt.Errorf("gguf: llama: embed %d outside [8, 16384]", c.Embed)
	case c.Layers < 1 || c.Layers > 256:
		return fmt.Errorf("gguf: llama: layers %d outside [1, 256]", c.Layers)
	case c.Heads < 1 || c.Embed%c.Heads != 0:
		return fmt.Errorf("gguf: llama: heads %d must be positive and divide embed %d", c.Heads, c.Embed)
	case (c.Embed/c.Heads)%2 != 0:
		return fmt.Errorf("gguf: llama: head size %d must be even for rotary embeddings", c.Embed/c.Heads)
	case c.KVHeads < 1 || c.Heads%c.KVHeads != 0:
		return fmt.Errorf("gguf: llama: kv heads %d must be positive and divide heads %d", c.KVHeads, c.Heads)
	case c.FFN < 1 || c.FFN > 1<<16:
		return fmt.Errorf("gguf: llama: ffn %d outside [1, 65536]", c.FFN)
	case c.Context < 16 || c.Context > 1<<20:
		return fmt.Errorf("gguf: llama: context %d outside [16, 1048576]", c.Context)
	}
	return nil
}

// Allowed reports whether the generated model may ever sample token id: the
// ASCII letters a–z and A–Z. Every one of them decodes to one byte that is a
// whole UTF-8 character and no whitespace, so each generated token streams as
// its own chunk, and none is a control token, so generation never stops
// before max_tokens.
func Allowed(id int) bool {
	return (id >= 'a' && id <= 'z') || (id >= 'A' && id <= 'Z')
}

// ByteToken is the text of the token of byte b in the byte-level BPE
// convention of GPT-2 (which llama.cpp's "gpt2" tokenizer expects): printable
// bytes stand for themselves, the others for the code points from 256 up, in
// byte order. With no merges, a tokenizer over these 256 texts turns every
// byte of any input into exactly one token.
func ByteToken(b byte) string {
	if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE {
		return string(rune(b))
	}
	// Count the non-printable bytes before b.
	n := 0
	for x := 0; x < int(b); x++ {
		xb := byte(x)
		if !((xb >= '!' && xb <= '~') || (xb >= 0xA1 && xb <= 0xAC) || xb >= 0xAE) {
			n++
		}
	}
	return string(rune(256 + n))
}

// NewLlama builds the model described in the package doc: llama architecture,
// the given shape, a byte-level "gpt2" vocabulary with no merges (so prompt
// tokens = prompt bytes, and no BOS is added), F32 weights drawn uniformly
// from a PCG stream seeded by cfg.Seed.
//
// Why the output can never be anything but a letter: llama has no bias
// terms, so the model makes its own. Every token embedding holds BiasChannel
// in dimension 0; the attention-output and FFN-down matrices have a zero row
// 0, so no layer changes it and the final RMS norm sees it intact: dimension
// 0 of the normalized state is n0 = BiasChannel·sqrt(E)/‖h‖ > 0. The output
// (lm_head) row of every token that is not Allowed — EOS, BOS, bytes that
// are whitespace, punctuation or parts of multi-byte characters — is
// (−Suppression, 0, …, 0), so its logit is −Suppression·n0; the rows of the
// allowed letters have 0 in dimension 0 and small weights elsewhere. The
// tests bound ‖h‖ from the weights and show the gap between the two groups
// exceeds 100 logits at any input, so no sampler setting can pick a
// suppressed token. Choosing a tokenizer whose EOS "is never produced" would
// not be enough: a random-weight model produces every token sometimes, and
// partial UTF-8 bytes would be held back by the server and merge chunks.
func NewLlama(cfg LlamaConfig) (*File, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	f := &File{KVs: llamaKVs(cfg)}
	w := &weights{f: f, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6767756631))} // stream name: "gguf1"
	w.vocabTensors(cfg.Embed)
	w.layerTensors(cfg)
	return f, nil
}

// llamaKVs is the metadata of the model cfg describes: the llama
// architecture's shape keys and the byte-level tokenizer.
func llamaKVs(cfg LlamaConfig) []KV {
	headDim := cfg.Embed / cfg.Heads
	tokens := make([]string, VocabSize)
	types := make([]int32, VocabSize)
	for b := 0; b < 256; b++ {
		tokens[b] = ByteToken(byte(b))
		types[b] = 1 // normal
	}
	tokens[BOSID], types[BOSID] = "<s>", 3 // control
	tokens[EOSID], types[EOSID] = "</s>", 3

	return []KV{
		{"general.architecture", "llama"},
		{"general.name", cfg.Name},
		{"general.file_type", uint32(0)}, // all F32
		{"general.alignment", uint32(DefaultAlignment)},
		{"llama.context_length", uint32(cfg.Context)},
		{"llama.embedding_length", uint32(cfg.Embed)},
		{"llama.block_count", uint32(cfg.Layers)},
		{"llama.feed_forward_length", uint32(cfg.FFN)},
		{"llama.attention.head_count", uint32(cfg.Heads)},
		{"llama.attention.head_count_kv", uint32(cfg.KVHeads)},
		{"llama.attention.layer_norm_rms_epsilon", float32(1e-5)},
		{"llama.rope.dimension_count", uint32(headDim)},
		{"llama.rope.freq_base", float32(10000)},
		{"llama.vocab_size", uint32(VocabSize)},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", "default"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.merges", []string{}},
		{"tokenizer.ggml.bos_token_id", uint32(BOSID)},
		{"tokenizer.ggml.eos_token_id", uint32(EOSID)},
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.ggml.add_eos_token", false},
	}
}

// weights appends a model's tensors to f, drawing their values from one
// seeded stream in the order the tensors are added.
type weights struct {
	f   *File
	rng *rand.Rand
}

// uniform is n values uniform in [-scale, scale).
func (w *weights) uniform(n int, scale float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32((2*w.rng.Float64() - 1) * scale)
	}
	return out
}

func (w *weights) add(name string, data []float32, dims ...int) {
	d := make([]uint64, len(dims))
	for i, x := range dims {
		d[i] = uint64(x)
	}
	w.f.Tensors = append(w.f.Tensors, Tensor{Name: name, Dims: d, Data: data})
}

func ones(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// zeroRow0 clears output dimension 0 of a matrix with rows of length
// rowLen, so it writes nothing into the bias channel.
func zeroRow0(m []float32, rowLen int) []float32 {
	clear(m[:rowLen])
	return m
}

// vocabTensors adds the token embedding (the bias channel set in every
// row), the output norm and the output matrix, whose rows only let allowed
// tokens be sampled.
func (w *weights) vocabTensors(e int) {
	emb := w.uniform(e*VocabSize, 1)
	for t := 0; t < VocabSize; t++ {
		emb[t*e] = BiasChannel
	}
	w.add("token_embd.weight", emb, e, VocabSize)
	w.add("output_norm.weight", ones(e), e)
	out := make([]float32, e*VocabSize)
	for t := 0; t < VocabSize; t++ {
		row := out[t*e : (t+1)*e]
		if !Allowed(t) {
			row[0] = -Suppression
			continue
		}
		copy(row[1:], w.uniform(e-1, outputScale))
	}
	w.add("output.weight", out, e, VocabSize)
}

// layerTensors adds each transformer block's norms, attention and FFN
// matrices, the matrices that write into the residual stream leaving the
// bias channel alone.
func (w *weights) layerTensors(cfg LlamaConfig) {
	e, ff := cfg.Embed, cfg.FFN
	kv := e / cfg.Heads * cfg.KVHeads
	in := 1 / math.Sqrt(float64(e))
	inFF := 1 / math.Sqrt(float64(ff))
	for l := 0; l < cfg.Layers; l++ {
		p := fmt.Sprintf("blk.%d.", l)
		w.add(p+"attn_norm.weight", ones(e), e)
		w.add(p+"attn_q.weight", w.uniform(e*e, in), e, e)
		w.add(p+"attn_k.weight", w.uniform(e*kv, in), e, kv)
		w.add(p+"attn_v.weight", w.uniform(e*kv, in), e, kv)
		w.add(p+"attn_output.weight", zeroRow0(w.uniform(e*e, writeScale*in), e), e, e)
		w.add(p+"ffn_norm.weight", ones(e), e)
		w.add(p+"ffn_gate.weight", w.uniform(e*ff, in), e, ff)
		w.add(p+"ffn_down.weight", zeroRow0(w.uniform(ff*e, writeScale*inFF), ff), ff, e)
		w.add(p+"ffn_up.weight", w.uniform(e*ff, in), e, ff)
	}
}
