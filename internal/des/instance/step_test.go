package instance

import (
	"fmt"
	"slices"
	"testing"

	"servesim/internal/des/kvcache"
	"servesim/internal/testkit/fake"
)

func TestSingleRequestTimeline(t *testing.T) {
	h := newHarness(t, baseConfig(), fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 10, Queue: 3, ATok: 5, AEnd: 7})
	h.at(&Request{ID: 1, Prompt: tokens(10, 1), OutputLen: 3})
	h.run()
	got := h.results[1]
	// Queued at 3; steps [3,113) prefill 10, [113,223) and [223,333) decode.
	want := Result{ID: 1, Status: StatusCompleted, EnqueueUs: 3, FirstScheduledUs: 3, FirstTokenUs: 113, DoneUs: 333,
		TTFTUs: 118, E2EUs: 118 + 230 + 7, ITLSumUs: 230, ITLCount: 2, SchedulingDelayUs: 3,
		PromptTokens: 10, OutputTokens: 3}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if steps := []string{"P10/0/10", "D1/10", "D1/11"}; !slices.Equal(h.model.steps, steps) {
		t.Errorf("steps: got %q, want %q", h.model.steps, steps)
	}
	if h.in.LastLeftUs() != 333 {
		t.Errorf("last left: got %d, want 333", h.in.LastLeftUs())
	}
}

func TestZeroOutput(t *testing.T) {
	h := newHarness(t, baseConfig(), fake.Linear{Base: 100, PerPrefillToken: 1, ATok: 5, AEnd: 7})
	h.at(&Request{ID: 1, ArrivalUs: 10, Prompt: tokens(10, 1), OutputLen: 0})
	h.run()
	got := h.results[1]
	// TTFT = E2E = t + Δ + A_tok − arrival = 10 + 110 + 5 − 10; no A_end.
	if got.Status != StatusCompleted || got.TTFTUs != 115 || got.E2EUs != 115 || got.OutputTokens != 0 {
		t.Errorf("got %+v, want completed with TTFT = E2E = 115 and no tokens", got)
	}
}

// TestBatchFormation checks step compositions against hand-computed
// expectations (P new/context/target, D count/context sum).
func TestBatchFormation(t *testing.T) {
	type req struct {
		id     int64
		at     int64
		prompt int
		base   int32
		out    int
		maxOut int
	}
	tests := []struct {
		name  string
		cfg   func(*Config)
		reqs  []req
		steps []string
		check func(t *testing.T, h *harness)
	}{
		{
			name: "budget chunks the second prompt; decode first next step",
			cfg:  func(c *Config) { c.MaxNumBatchedTokens = 8 },
			reqs: []req{{id: 1, prompt: 6, base: 100, out: 2}, {id: 2, prompt: 6, base: 200, out: 2}},
			// step 1: r1 6 tokens, r2 the remaining budget 2; step 2: r1 decodes
			// (completes), r2 gets its last 4; step 3: r2 decodes.
			steps: []string{"P6/0/6 P2/0/6", "P4/2/6 D1/6", "D1/6"},
		},
		{
			name:  "max-num-seqs 1 serialises",
			cfg:   func(c *Config) { c.MaxNumSeqs = 1 },
			reqs:  []req{{id: 1, prompt: 4, base: 100, out: 2}, {id: 2, prompt: 4, base: 200, out: 1}},
			steps: []string{"P4/0/4", "D1/4", "P4/0/4"},
		},
		{
			name:  "long-prefill threshold chunks",
			cfg:   func(c *Config) { c.LongPrefillThreshold = 3 },
			reqs:  []req{{id: 1, prompt: 7, base: 100, out: 1}},
			steps: []string{"P3/0/7", "P3/3/7", "P1/6/7"},
		},
		{
			name: "prefix hit keeps at least one token to compute",
			reqs: []req{{id: 1, prompt: 8, base: 100, out: 1}, {id: 2, at: 10000, prompt: 8, base: 100, out: 1},
				{id: 3, at: 20000, prompt: 10, base: 100, out: 1}},
			// r2: k = 2 full blocks, c = 4·min(2, ⌊7/4⌋) = 4. r3: c = 4·min(2, ⌊9/4⌋) = 8.
			steps: []string{"P8/0/8", "P4/4/8", "P2/8/10"},
			check: func(t *testing.T, h *harness) {
				if c := h.results[2].CachedPromptTokens; c != 4 {
					t.Errorf("r2 cached tokens: got %d, want 4", c)
				}
				st := h.in.KV().Stats()
				// r1 fills 2 blocks, r2 recomputes block 1 (a duplicate, not
				// indexed), r3's last block stays partial.
				if st.Hits != 3 || st.Misses != 3 {
					t.Errorf("hits/misses: got %d/%d, want 3/3", st.Hits, st.Misses)
				}
			},
		},
		{
			name: "preemption: the tail preempts itself, recompute hits its own prefix",
			cfg: func(c *Config) {
				c.KV = kvcache.Config{Blocks: 3, BlockSize: 2}
				c.MaxModelLen = 6
			},
			reqs: []req{{id: 1, prompt: 2, base: 100, out: 3}, {id: 2, prompt: 2, base: 200, out: 3}},
			// step 2: r1 takes the last free block, r2 needs one: r2 (the tail)
			// is preempted, Phase 2 skipped. Step 3: r2 needs its cached block
			// pinned plus one new: 2 > 1 free, waits; r1 completes. Step 4: r2
			// recomputes 1 token (a decode by the g ≥ 1, need = 1 rule).
			steps: []string{"P2/0/2 P2/0/2", "D1/2", "D1/3", "D1/2", "D1/3"},
			check: func(t *testing.T, h *harness) {
				r2 := h.results[2]
				if r2.Preemptions != 1 || r2.OutputTokens != 3 || r2.ITLCount != 2 {
					t.Errorf("r2: got %+v", r2)
				}
				// Steps last 104, 102, 102, 102, 102 µs. r2's first token at 104
				// is kept; its second ends step 4 at 410 and its ITL sample
				// spans the interruption.
				if r2.FirstTokenUs != 104 || r2.ITLSumUs != (410-104)+(512-410) {
					t.Errorf("r2 times: first %d itl %d", r2.FirstTokenUs, r2.ITLSumUs)
				}
				if h.in.Counters().Preemptions != 1 {
					t.Errorf("preemptions: got %d, want 1", h.in.Counters().Preemptions)
				}
			},
		},
		{
			name: "guards: prompt ≥ M and prompt + max_output_len > M dropped; undeclared budget capped",
			cfg:  func(c *Config) { c.MaxModelLen = 12 },
			reqs: []req{{id: 1, prompt: 12, base: 100, out: 1}, {id: 2, prompt: 8, base: 200, out: 1, maxOut: 5},
				{id: 3, prompt: 8, base: 300, out: 100}},
			// r3: max_output_len = 12 − 8 = 4; progress reaches M − 1 = 11 after
			// the prefill and 3 decodes (tokens 1..4): length-capped at 4 tokens.
			steps: []string{"P8/0/8", "D1/8", "D1/9", "D1/10"},
			check: func(t *testing.T, h *harness) {
				if h.results[1].Status != StatusDropped || h.results[2].Status != StatusDropped {
					t.Errorf("r1 %v r2 %v, want dropped", h.results[1].Status, h.results[2].Status)
				}
				r3 := h.results[3]
				if r3.Status != StatusCompleted || !r3.LengthCapped || r3.OutputTokens != 4 {
					t.Errorf("r3: got %+v, want length-capped after 4 tokens", r3)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := baseConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			h := newHarness(t, cfg, fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2})
			for _, q := range tc.reqs {
				h.at(&Request{ID: q.id, ArrivalUs: q.at, Prompt: tokens(q.prompt, q.base), OutputLen: q.out, MaxOutputLen: q.maxOut})
			}
			h.run()
			if !slices.Equal(h.model.steps, tc.steps) {
				t.Errorf("steps: got %q, want %q", h.model.steps, tc.steps)
			}
			if tc.check != nil {
				tc.check(t, h)
			}
		})
	}
}

type recTracer struct{ ev []string }

func (r *recTracer) Scheduled(now int64, q *Request, n int) {
	r.ev = append(r.ev, fmt.Sprintf("sched %d@%d+%d", q.ID, now, n))
}
func (r *recTracer) Preempted(now int64, q *Request) {
	r.ev = append(r.ev, fmt.Sprintf("preempt %d@%d", q.ID, now))
}
func (r *recTracer) Left(at int64, q *Request) {
	r.ev = append(r.ev, fmt.Sprintf("left %d@%d", q.ID, at))
}

func TestTracerMarkers(t *testing.T) {
	cfg := baseConfig()
	cfg.KV = kvcache.Config{Blocks: 3, BlockSize: 2}
	cfg.MaxModelLen = 6
	tr := &recTracer{}
	cfg.Tracer = tr
	cfg.FastForward = true // ignored with a tracer
	h := newHarness(t, cfg, fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2})
	h.at(&Request{ID: 1, Prompt: tokens(2, 100), OutputLen: 3})
	h.at(&Request{ID: 2, Prompt: tokens(2, 200), OutputLen: 3})
	h.run()
	want := []string{"sched 1@0+2", "sched 2@0+2", "preempt 2@104", "left 1@308", "sched 2@308+1", "left 2@512"}
	if !slices.Equal(tr.ev, want) {
		t.Errorf("markers: got %q, want %q", tr.ev, want)
	}
}
