package instance

import (
	"slices"
	"strings"
	"testing"

	"servesim/internal/des"
	"servesim/internal/testkit/fake"
)

// switchCase runs reqs (id, arrival µs, prompt length, token base, output
// length) on baseConfig changed by cfg, with fast-forward off and on, and
// checks the step compositions.
func switchCase(t *testing.T, cfg func(*Config), reqs [][5]int, want []string) map[int64]Result {
	t.Helper()
	var results map[int64]Result
	for _, ff := range []bool{false, true} {
		c := baseConfig()
		cfg(&c)
		c.FastForward = ff
		h := newHarness(t, c, fake.Linear{Base: 100})
		for _, r := range reqs {
			h.at(&Request{ID: int64(r[0]), ArrivalUs: int64(r[1]), Prompt: tokens(r[2], int32(r[3])), OutputLen: r[4]})
		}
		h.run()
		if !slices.Equal(h.model.steps, want) {
			t.Errorf("fast-forward %v: steps %q, want %q", ff, h.model.steps, want)
		}
		if len(h.results) != len(reqs) {
			t.Errorf("fast-forward %v: %d requests finished, want %d", ff, len(h.results), len(reqs))
		}
		results = h.results
	}
	return results
}

// TestPrefixCachingOff: with prefix caching off, requests sharing a prompt
// compute it whole every time and nothing is counted as a hit (with it on,
// the same requests hit: TestBatchFormation's prefix case).
func TestPrefixCachingOff(t *testing.T) {
	res := switchCase(t, func(c *Config) { c.KV.NoPrefixCaching = true },
		[][5]int{{1, 0, 8, 100, 1}, {2, 10000, 8, 100, 1}, {3, 20000, 10, 100, 1}},
		[]string{"P8/0/8", "P8/0/8", "P10/0/10"})
	for id, r := range res {
		if r.CachedPromptTokens != 0 {
			t.Errorf("request %d: %d prompt tokens from the cache, want 0", id, r.CachedPromptTokens)
		}
	}
	c := baseConfig()
	c.KV.NoPrefixCaching = true
	h := newHarness(t, c, fake.Linear{Base: 100})
	h.at(&Request{ID: 1, Prompt: tokens(8, 100), OutputLen: 1})
	h.at(&Request{ID: 2, ArrivalUs: 10000, Prompt: tokens(8, 100), OutputLen: 1})
	h.run()
	if st := h.in.KV().Stats(); st.Hits != 0 || st.Misses != 4 {
		t.Errorf("hits/misses: got %d/%d, want 0/4", st.Hits, st.Misses)
	}
}

// TestChunkedPrefillOff: without chunked prefill a prompt is scheduled whole
// or waits, and admission stops at the first that does not fit (a shorter
// one behind it waits too), as vLLM's scheduler does; with it on, the
// second prompt is chunked into the step's leftover budget.
func TestChunkedPrefillOff(t *testing.T) {
	reqs := [][5]int{{1, 0, 6, 100, 2}, {2, 0, 6, 200, 2}, {3, 0, 1, 300, 1}}
	budget := func(c *Config) { c.MaxNumBatchedTokens, c.MaxModelLen = 8, 8 }
	switchCase(t, budget, reqs, []string{"P6/0/6 P2/0/6", "P4/2/6 P1/0/1 D1/6", "D1/6"})
	switchCase(t, func(c *Config) { budget(c); c.NoChunkedPrefill = true }, reqs,
		[]string{"P6/0/6", "P6/0/6 P1/0/1 D1/6", "D1/6"})
	// The long-prefill threshold still caps a prompt's share of a step, as
	// in vLLM (the check applies to the capped count).
	switchCase(t, func(c *Config) { budget(c); c.NoChunkedPrefill, c.LongPrefillThreshold = true, 4 },
		[][5]int{{1, 0, 7, 100, 1}}, []string{"P4/0/7", "P3/4/7"})
}

// TestChunkedPrefillOffNeedsTheBudget: vLLM refuses to start without
// chunked prefill when a prompt of max_model_len could not fit one step.
func TestChunkedPrefillOffNeedsTheBudget(t *testing.T) {
	c := baseConfig()
	c.NoChunkedPrefill, c.MaxNumBatchedTokens = true, 100
	c.Latency = &fake.Linear{Base: 1}
	_, err := New(des.New(), c)
	if err == nil || !strings.Contains(err.Error(), "max-num-batched-tokens 100 must be at least max-model-len 256") {
		t.Errorf("New = %v, want a refusal naming both limits", err)
	}
}
