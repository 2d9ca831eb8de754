package cluster

import (
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/sim"
	"servesim/internal/testkit/fake"
)

// TestNoHitLRUScores: the no-hit-lru rule on hand-built candidates (BLIS's
// routing guide, "Available Scorers": LRU positional scoring for cold
// requests, warm = 0.5).
func TestNoHitLRUScores(t *testing.T) {
	tests := []struct {
		name  string
		cands []cand
		want  []float64
	}{
		{"cold: 1 − rank/(n − 1)", []cand{{coldRank: 2}, {coldRank: 0}, {coldRank: 1}}, []float64{0, 1, 0.5}},
		{"cold: one candidate scores 1", []cand{{coldRank: 0}}, []float64{1}},
		{"warm: neutral 0.5 everywhere", []cand{{coldRank: 0, cached: 0}, {coldRank: 1, cached: 3}}, []float64{0.5, 0.5}},
	}
	for _, tc := range tests {
		got := noHitLRU(tc.cands, nil)
		for k := range tc.want {
			if !near(got[k], tc.want[k]) {
				t.Errorf("%s: candidate %d: got %g, want %g", tc.name, k, got[k], tc.want[k])
			}
		}
	}
}

// TestNoHitLRURouting: cold requests go to the instances in turn, those
// that never had a cold request first, then the least recently used; a
// warm request follows its prefix (precise-prefix-cache) and does not move
// the cold order.
func TestNoHitLRURouting(t *testing.T) {
	var ics []instance.Config
	for i := 0; i < 3; i++ {
		ics = append(ics, instance.Config{KV: kvcache.Config{Blocks: 64, BlockSize: 4}, MaxNumSeqs: 2,
			MaxNumBatchedTokens: 64, MaxModelLen: 128, Latency: &fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2}, FastForward: true})
	}
	// Requests 1-3 cold, 4 shares request 2's prompt (warm), 5-6 cold;
	// spaced so that each finishes before the next arrives.
	prompts := [][]int32{tokens(12, 100), tokens(12, 200), tokens(12, 300), tokens(12, 200), tokens(12, 400), tokens(12, 500)}
	var reqs []*instance.Request
	for i, p := range prompts {
		reqs = append(reqs, &instance.Request{ID: int64(i + 1), ArrivalUs: int64(i) * 10000, Prompt: p, OutputLen: 2, MaxOutputLen: 2})
	}
	got := map[int64]int{}
	c, err := New(Config{Instances: ics, Routing: Weighted, Scorers: []Scorer{{ScorerPrecisePrefixCache, 1}, {ScorerNoHitLRU, 1}}, Seed: 7},
		&sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, r *instance.Request) { got[r.ID] = res.Instance }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(); err != nil {
		t.Fatal(err)
	}
	want := map[int64]int{1: 0, 2: 1, 3: 2, 4: 1, 5: 0, 6: 1}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("request %d: instance %d, want %d (all: %v)", id, got[id], w, got)
		}
	}
}
