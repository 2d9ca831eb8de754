package destest

import (
	"io"
	"math/rand/v2"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/latency"
)

// ChatbotInstance is Qwen3-14B on one H100 (TP 1) with the trained-physics
// latency model and spec defaults: 15909 KV blocks of 16 tokens, 256 seqs,
// 2048 batched tokens.
func ChatbotInstance(tb testing.TB, fastForward bool) instance.Config {
	tb.Helper()
	m, err := latency.LookupModel("qwen3-14b")
	if err != nil {
		tb.Fatal(err)
	}
	g, err := latency.LookupGPU("H100")
	if err != nil {
		tb.Fatal(err)
	}
	lat, err := latency.NewTrainedPhysics(latency.TrainedPhysicsConfig{Model: m, GPU: g, TP: 1})
	if err != nil {
		tb.Fatal(err)
	}
	blocks, err := latency.KVBlocks(m, g, 1, 0.9, 16)
	if err != nil {
		tb.Fatal(err)
	}
	return instance.Config{KV: kvcache.Config{Blocks: int(blocks), BlockSize: 16}, MaxNumSeqs: 256,
		MaxNumBatchedTokens: 2048, MaxModelLen: int(latency.MaxModelLen(m, blocks, 16)),
		Latency: lat, FastForward: fastForward}
}

// ChatbotLengths draws the benchmark's lengths: input 512±128 and output
// 256±64 tokens (normal, at least 1).
func ChatbotLengths(r *rand.Rand) (in, out int) {
	return max(1, int(512+128*r.NormFloat64())), max(1, int(256+64*r.NormFloat64()))
}

// Source draws Poisson arrivals with lengths from Lengths, lazily (constant
// memory). Requests handed back through Recycle are reused with their
// prompt buffers, as a streaming workload generator would.
type Source struct {
	Rng       *rand.Rand
	N         int     // requests in all
	MeanGapUs float64 // mean inter-arrival time
	Lengths   func(rng *rand.Rand) (in, out int)
	Shared    bool // leave the requests' privacy undeclared: every KV block is hashed and indexed

	i    int
	t    float64
	free []*instance.Request
}

// Next implements the simulators' request sources.
func (g *Source) Next() (*instance.Request, error) {
	if g.i >= g.N {
		return nil, io.EOF
	}
	g.i++
	g.t += g.Rng.ExpFloat64() * g.MeanGapUs
	in, out := g.Lengths(g.Rng)
	var buf []int32
	var r *instance.Request
	if k := len(g.free); k > 0 {
		r = g.free[k-1]
		g.free = g.free[:k-1]
		buf = r.Prompt[:0]
		r.Reset()
	} else {
		r = &instance.Request{}
	}
	if cap(buf) < in {
		buf = make([]int32, 0, max(in, 1024))
	}
	buf = buf[:in]
	base := int32(g.i) << 10
	for k := range buf {
		buf[k] = base + int32(k)
	}
	r.ID, r.ArrivalUs, r.Prompt, r.OutputLen, r.MaxOutputLen = int64(g.i), int64(g.t), buf, out, out
	// Ids i·1024 + k: no two requests' prompts start alike while i·1024
	// fits an int32 (2M requests); beyond, they wrap and may repeat.
	r.Private = !g.Shared && g.i < 1<<21
	return r, nil
}

// Recycle hands a finished request back for reuse.
func (g *Source) Recycle(r *instance.Request) { g.free = append(g.free, r) }
