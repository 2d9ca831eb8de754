package replay

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"servesim/internal/tracev2"
)

// sessionHashTrace draws accumulating sessions whose rounds carry hash ids
// (a conversation's first round on a shared system region, later rounds
// resending the earlier ones' ids as Mooncake's do), some later rounds
// shorter than their context (their hash ids are used then), prompts that
// end anywhere in a block, and other rows with hash ids alone.
func sessionHashTrace(rng *rand.Rand, region int) []tracev2.Record {
	var out []tracev2.Record
	var t int64
	type conv struct {
		hashes []int64
		round  int
		n      int
	}
	convs := make([]conv, 5)
	next := int64(100)
	for i := 0; i < 40+rng.IntN(60); i++ {
		t += rng.Int64N(50_000)
		ci := rng.IntN(len(convs))
		c := &convs[ci]
		if c.round == 0 {
			c.hashes = []int64{int64(rng.IntN(2))} // a shared system region
		}
		for k := rng.IntN(2); k >= 0; k-- {
			c.hashes = append(c.hashes, next)
			next++
		}
		n := (len(c.hashes)-1)*region + 1 + rng.IntN(region)
		if c.round > 0 && rng.IntN(4) > 0 {
			n = max(n, c.n+rng.IntN(3*region)) // usually the whole context and more
		}
		r := tracev2.Record{RequestID: int64(i), ArrivalTimeUs: t, InputTokens: n, OutputTokens: 1 + rng.IntN(40),
			Status: "ok", SessionID: fmt.Sprint("c", ci), RoundIndex: c.round, HashIDs: append([]int64(nil), c.hashes...)}
		c.n = n + r.OutputTokens
		c.round++
		if rng.IntN(6) == 0 {
			r.SessionID, r.RoundIndex = "", 0 // a row with hash ids alone
		}
		out = append(out, r)
	}
	return out
}

// TestSessionHashPromptsChangeNothing: accumulating sessions whose rounds
// carry hash ids replay as the reference does (every block hashed from its
// ids): a round that resends its context hits the blocks its predecessor's
// hash-id regions left in the cache, whichever way those were hashed.
func TestSessionHashPromptsChangeNothing(t *testing.T) {
	var hits float64
	for seed := uint64(0); seed < 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		region := []int{16, 32, 48}[seed%3]
		recs := sessionHashTrace(rng, region)
		dep := testDeploy(t, rng, int(seed%3), 80+rng.IntN(120), 4+rng.IntN(12))
		a, sa := replayRows(t, recs, Config{Deploy: dep, Seed: 9, HashBlockTokens: region, ContextGrowth: "accumulate", hashAll: true})
		b, sb := replayRows(t, recs, Config{Deploy: dep, Seed: 9, HashBlockTokens: region, ContextGrowth: "accumulate", UniqueIDs: true})
		sameRows(t, fmt.Sprintf("seed %d, reference / shortcuts", seed), a, b, sa, sb)
		hits += sa.Summary.CacheHitRate
	}
	t.Logf("60 traces: mean cache hit rate %.2f", hits/60)
	if hits/60 < 0.3 {
		t.Errorf("mean cache hit rate %.2f: the sessions share too little", hits/60)
	}
}
