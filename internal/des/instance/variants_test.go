package instance

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"servesim/internal/des/kvcache"
	"servesim/internal/testkit/fake"
)

// TestVariantSteps checks each batching variant on tiny workloads whose
// step compositions are computed by hand (P new/context/target, D
// count/context sum). Step time is 100 µs + 1 µs per prefill token + 2 µs
// per decode request.
func TestVariantSteps(t *testing.T) {
	type req struct {
		id          int64
		at          int64
		prompt, out int
		maxOut      int
	}
	decodes := func(from, n int) []string {
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, fmt.Sprintf("D1/%d", from+i))
		}
		return out
	}
	cat := func(parts ...[]string) []string { return slices.Concat(parts...) }
	tests := []struct {
		name  string
		cfg   func(*Config)
		reqs  []req
		steps []string
	}{
		{
			// ⌈P/C⌉ + D − 1 = ⌈1000/512⌉ + 5 − 1 = 6 steps.
			name:  "sarathi one request",
			cfg:   func(c *Config) { c.Batching, c.ChunkSize = BatchSarathi, 512 },
			reqs:  []req{{id: 1, prompt: 1000, out: 5}},
			steps: cat([]string{"P512/0/1000", "P488/512/1000"}, decodes(1000, 4)),
		},
		{
			// ⌈1000/300⌉ + 3 − 1 = 6 steps.
			name:  "sarathi chunk 300",
			cfg:   func(c *Config) { c.Batching, c.ChunkSize = BatchSarathi, 300 },
			reqs:  []req{{id: 1, prompt: 1000, out: 3}},
			steps: cat([]string{"P300/0/1000", "P300/300/1000", "P300/600/1000", "P100/900/1000"}, decodes(1000, 2)),
		},
		{
			// Decodes first: B's chunk is C minus A's decode token.
			name: "sarathi decode first",
			cfg:  func(c *Config) { c.Batching, c.ChunkSize = BatchSarathi, 512 },
			reqs: []req{{id: 1, prompt: 8, out: 4}, {id: 2, at: 50, prompt: 600, out: 2}},
			// [0,108) A prefill; [108,...) A decode + B 511; then A decode + B 89.
			steps: []string{"P8/0/8", "P511/0/600 D1/8", "P89/511/600 D1/9", "D2/610"},
		},
		{
			// ⌈M/b⌉ = 16 blocks reserved per request; with 20 blocks B waits.
			name:  "orca reservation serialises",
			cfg:   func(c *Config) { c.Batching, c.KV.Blocks, c.MaxModelLen = BatchOrca, 20, 64 },
			reqs:  []req{{id: 1, prompt: 10, out: 3}, {id: 2, prompt: 10, out: 3}},
			steps: []string{"P10/0/10", "D1/10", "D1/11", "P10/0/10", "D1/10", "D1/11"},
		},
		{
			// With 40 blocks both fit; B arriving mid-run joins at once, whole.
			name:  "orca joins whole",
			cfg:   func(c *Config) { c.Batching, c.KV.Blocks, c.MaxModelLen = BatchOrca, 40, 64 },
			reqs:  []req{{id: 1, prompt: 10, out: 4}, {id: 2, at: 50, prompt: 30, out: 2}},
			steps: []string{"P10/0/10", "P30/0/30 D1/10", "D2/41", "D1/12"},
		},
		{
			// Request-level: B waits for A's whole batch to finish.
			name:  "faster-transformer static batch",
			cfg:   func(c *Config) { c.Batching, c.MaxModelLen = BatchFasterTransformer, 64 },
			reqs:  []req{{id: 1, prompt: 10, out: 5}, {id: 2, at: 50, prompt: 10, out: 2}},
			steps: cat([]string{"P10/0/10"}, decodes(10, 4), []string{"P10/0/10", "D1/10"}),
		},
		{
			name:  "faster-transformer batch together",
			cfg:   func(c *Config) { c.Batching, c.MaxModelLen = BatchFasterTransformer, 64 },
			reqs:  []req{{id: 1, prompt: 10, out: 3}, {id: 2, prompt: 6, out: 2}},
			steps: []string{"P10/0/10 P6/0/6", "D2/16", "D1/11"},
		},
		{
			// Prefill first: B's whole prompt runs alone, then both decode.
			name:  "vllm-v0 prefill first",
			cfg:   func(c *Config) { c.Batching = BatchVLLMv0 },
			reqs:  []req{{id: 1, prompt: 10, out: 4}, {id: 2, at: 150, prompt: 20, out: 2}},
			steps: []string{"P10/0/10", "D1/10", "P20/0/20", "D2/31", "D1/12"},
		},
		{
			// 3 × 2000 > 4096: the third prompt waits for the next prefill step.
			name: "vllm-v0 batch token cap",
			cfg: func(c *Config) {
				c.Batching, c.KV.Blocks, c.MaxModelLen, c.MaxNumBatchedTokens = BatchVLLMv0, 2000, 4096, 8192
			},
			reqs:  []req{{id: 1, prompt: 2000, out: 1}, {id: 2, prompt: 2000, out: 1}, {id: 3, prompt: 2000, out: 1}},
			steps: []string{"P2000/0/2000 P2000/0/2000", "P2000/0/2000"},
		},
		{
			// Block size 1. B arrives during A's prefill and waits for the
			// 10th consecutive decode batch; its prefill runs alone.
			name: "lightllm forced prefill",
			cfg: func(c *Config) {
				c.Batching, c.KV, c.MaxModelLen = BatchLightLLM, kvcache.Config{Blocks: 40, BlockSize: 1}, 40
			},
			reqs:  []req{{id: 1, prompt: 4, out: 30}, {id: 2, at: 50, prompt: 4, out: 3}},
			steps: cat([]string{"P4/0/4"}, decodes(4, 10), []string{"P4/0/4", "D2/18", "D2/20"}, decodes(16, 17)),
		},
		{
			// With 38 tokens the projected peak of A (to 34 tokens) and B
			// (4 + 10 declared) exceeds T once A has 11 tokens: B waits for A.
			name: "lightllm projected peak",
			cfg: func(c *Config) {
				c.Batching, c.KV, c.MaxModelLen = BatchLightLLM, kvcache.Config{Blocks: 38, BlockSize: 1}, 38
			},
			reqs:  []req{{id: 1, prompt: 4, out: 30}, {id: 2, at: 50, prompt: 4, out: 3, maxOut: 10}},
			steps: cat([]string{"P4/0/4"}, decodes(4, 29), []string{"P4/0/4"}, decodes(4, 2)),
		},
	}
	for _, tc := range tests {
		for _, ff := range []bool{false, true} {
			cfg := baseConfig()
			cfg.KV = kvcache.Config{Blocks: 512, BlockSize: 4}
			cfg.MaxModelLen = 2048
			cfg.FastForward = ff
			tc.cfg(&cfg)
			h := newHarness(t, cfg, fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2})
			for _, q := range tc.reqs {
				mo := q.maxOut
				if mo == 0 {
					mo = q.out
				}
				h.at(&Request{ID: q.id, ArrivalUs: q.at, Prompt: tokens(q.prompt, int32(10000*q.id)), OutputLen: q.out, MaxOutputLen: mo})
			}
			h.run()
			if !slices.Equal(h.model.steps, tc.steps) {
				t.Errorf("%s (ff %v): steps\n got %q\nwant %q", tc.name, ff, h.model.steps, tc.steps)
			}
			for _, q := range tc.reqs {
				if r := h.results[q.id]; r.Status != StatusCompleted || r.OutputTokens != q.out {
					t.Errorf("%s: request %d: %s with %d tokens, want completed with %d", tc.name, q.id, r.Status, r.OutputTokens, q.out)
				}
			}
		}
	}
}

// TestVariantInvariants runs every batching variant over random
// configurations and workloads (P/D parts included): the invariants of the
// reference path hold (INV-1..5, 8), results are identical with and
// without inline steps, and orca, faster-transformer and lightllm never
// preempt requests that stay within their declared budget.
func TestVariantInvariants(t *testing.T) {
	variants := BatchingVariants()[1:]
	steps := map[Batching]int64{}
	for seed := uint64(0); seed < 500; seed++ {
		rng := rand.New(rand.NewPCG(seed, 31))
		cfg := randomConfig(rng)
		cfg.Batching = variants[seed%uint64(len(variants))]
		cfg.ChunkSize = []int{1, 7, 64, 512}[rng.IntN(4)]
		if cfg.Batching == BatchLightLLM {
			cfg.KV = kvcache.Config{Blocks: cfg.KV.Blocks * cfg.KV.BlockSize, BlockSize: 1}
		}
		ws := randomWorkload(rng, cfg.MaxModelLen)
		a := simulate(cfg, ws, false)
		b := simulate(cfg, ws, true)
		for _, v := range append(a.violations, b.violations...) {
			t.Fatalf("seed %d %s (%+v): %s", seed, cfg.Batching, cfg, v)
		}
		if !reflect.DeepEqual(a.results, b.results) || a.counters != b.counters || a.end != b.end {
			t.Fatalf("seed %d %s: inline steps change results", seed, cfg.Batching)
		}
		steps[cfg.Batching] += a.counters.Steps
		if cfg.Batching == BatchOrca || cfg.Batching == BatchFasterTransformer {
			budgeted := true
			for _, w := range ws {
				budgeted = budgeted && w.maxOut >= w.out && w.kind == 0
			}
			if budgeted && a.counters.Preemptions > 0 {
				t.Fatalf("seed %d %s: %d preemptions despite reservations", seed, cfg.Batching, a.counters.Preemptions)
			}
		}
	}
	for _, v := range variants {
		if steps[v] == 0 {
			t.Errorf("%s never stepped", v)
		}
	}
}

type stepRec struct{ steps []string }

func (s *stepRec) Step(inst int, start, end int64, i StepInfo) {
	s.steps = append(s.steps, fmt.Sprintf("%d %d-%d %+v", inst, start, end, i))
}

// TestStepObserverUnderFastForward: the step hook reports the same steps,
// with the same compositions, whether steps run one event at a time or
// inline with lazy decoders; its totals agree with the counters.
func TestStepObserverUnderFastForward(t *testing.T) {
	var inline int64
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		cfg := randomConfig(rng)
		ws := randomWorkload(rng, cfg.MaxModelLen)
		var a, b stepRec
		cfg.Steps = &a
		slow := simulate(cfg, ws, false)
		cfg.Steps = &b
		quick := simulate(cfg, ws, true)
		if !slices.Equal(a.steps, b.steps) {
			t.Fatalf("seed %d: step streams differ (%d and %d steps)", seed, len(a.steps), len(b.steps))
		}
		if int64(len(a.steps)) != slow.counters.Steps {
			t.Fatalf("seed %d: %d steps reported, %d counted", seed, len(a.steps), slow.counters.Steps)
		}
		var gen int64
		for _, s := range b.steps {
			var i StepInfo
			var inst, st, en int64
			fmt.Sscanf(s, "%d %d-%d {Batch:%d PrefillTokens:%d DecodeTokens:%d Generated:%d", &inst, &st, &en,
				&i.Batch, &i.PrefillTokens, &i.DecodeTokens, &i.Generated)
			gen += int64(i.Generated)
		}
		if gen != quick.counters.OutputTokens {
			t.Fatalf("seed %d: %d tokens reported, %d counted", seed, gen, quick.counters.OutputTokens)
		}
		inline += simulateCounters(cfg, ws).FastSteps
	}
	if inline == 0 {
		t.Error("no step ran inline: the hook was not tested under fast-forward")
	}
}
