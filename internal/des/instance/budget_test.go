package instance

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"servesim/internal/des/kvcache"
	"servesim/internal/testkit/fake"
)

// budgetWorkload draws what makes the step budget bind with decoders in
// flight, as Mooncake's long prompts do: long prompts prefilled in chunks
// among many short requests that decode meanwhile, some admitted before a
// long one (its chunks take what the decoders leave), some after (they
// decode behind an older prefill, and a short budget leaves some without
// their token).
func budgetWorkload(rng *rand.Rand, m int) []wreq {
	var out []wreq
	var t int64
	for i := 0; i < 20+rng.IntN(40); i++ {
		t += rng.Int64N(400)
		n := 1 + rng.IntN(8)
		if rng.IntN(5) == 0 {
			n = 100 + rng.IntN(m-140)
		}
		out = append(out, wreq{id: int64(i + 1), at: t, prompt: tokens(n, int32(1000*i)), out: 1 + rng.IntN(60), privateFrom: -1})
	}
	return out
}

// TestBudgetBoundStepsFastForward: with the step budget binding while
// requests decode, fast-forwarded steps (lazy decoders first, the active
// requests' chunks from what the budget leaves them) give the results,
// counters, ITL samples and KV statistics of stepping one by one; and most
// such steps are fast-forwarded.
func TestBudgetBoundStepsFastForward(t *testing.T) {
	var lazy, steps int64
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 31))
		cfg := Config{
			KV:                  kvcache.Config{Blocks: 400 + rng.IntN(400), BlockSize: []int{1, 4, 16}[rng.IntN(3)]},
			MaxNumSeqs:          8 + rng.IntN(40),
			MaxNumBatchedTokens: 8 + rng.IntN(40),
			MaxModelLen:         400,
			AsyncScheduling:     rng.IntN(2) == 0,
			Latency:             &fake.Linear{Base: 100 + rng.Int64N(400), PerPrefillToken: 1 + rng.Int64N(4), PerDecode: rng.Int64N(20)},
		}
		if rng.IntN(2) == 0 {
			cfg.LongPrefillThreshold = 1 + rng.IntN(cfg.MaxNumBatchedTokens)
		}
		ws := budgetWorkload(rng, cfg.MaxModelLen)
		slow, quick := simulate(cfg, ws, false), simulate(cfg, ws, true)
		for _, v := range append(slow.violations, quick.violations...) {
			t.Fatalf("seed %d: %s", seed, v)
		}
		for id, a := range slow.results {
			if b := quick.results[id]; a != b {
				t.Fatalf("seed %d: request %d differs\n step-by-step %+v\n fast-forward %+v", seed, id, a, b)
			}
		}
		if !reflect.DeepEqual(slow.results, quick.results) || slow.counters != quick.counters || slow.kv != quick.kv ||
			!reflect.DeepEqual(slow.itl, quick.itl) || slow.end != quick.end {
			t.Fatalf("seed %d: totals differ\n%+v %+v\n%+v %+v", seed, slow.counters, slow.kv, quick.counters, quick.kv)
		}
		c := simulateCounters(cfg, ws)
		lazy += c.LazySteps
		steps += c.Steps
	}
	t.Logf("300 workloads: %d steps, %d fast-forwarded", steps, lazy)
	// Computing every chunk from the whole budget, 69% were (a chunk and
	// the decoders then add up to more than the budget).
	if lazy*100 < steps*85 {
		t.Errorf("%d of %d steps fast-forwarded: the budget-bound steps are not", lazy, steps)
	}
}

// TestLazyFirst: the budget is shared out as the reference step does only
// when every lazy decoder comes before every active request in the running
// list; one lazy decoder admitted after the oldest active request, in any
// bucket, says otherwise.
func TestLazyFirst(t *testing.T) {
	req := func(aseq int64) *Request { return &Request{aseq: aseq} }
	in := &Instance{}
	in.lz.buckets = make([][]*Request, 4)
	if !in.lazyFirst() {
		t.Error("no requests: not lazy first")
	}
	in.lz.buckets[1] = []*Request{req(1), req(3)}
	in.lz.buckets[3] = []*Request{req(2)}
	in.lz.n = 3
	in.lz.active = []*Request{req(4), req(7)}
	if !in.lazyFirst() {
		t.Error("decoders 1-3 before active 4, 7: not lazy first")
	}
	in.lz.buckets[2] = []*Request{req(5)}
	in.lz.n = 4
	if in.lazyFirst() {
		t.Error("decoder 5 after active 4: lazy first")
	}
	in.lz.active = nil
	if !in.lazyFirst() {
		t.Error("no active request: not lazy first")
	}
}
