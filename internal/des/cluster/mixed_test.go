package cluster

import (
	"math/rand/v2"
	"testing"

	"servesim/internal/des"
	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/testkit/fake"
)

// TestKVScorerUsesOwnCapacity: on a cluster of mixed instances (64 and 256
// KV blocks, as a small and a large GPU give), the same request running on
// each holds the same blocks, and the kv-utilization scorer reads each
// instance's share of its own capacity: 1/4 of the large one's, so the
// router prefers it.
func TestKVScorerUsesOwnCapacity(t *testing.T) {
	eng := des.New()
	var insts []*instance.Instance
	for i, blocks := range []int{64, 256} {
		in, err := instance.New(eng, instance.Config{ID: i, KV: kvcache.Config{Blocks: blocks, BlockSize: 4}, MaxNumSeqs: 4,
			MaxNumBatchedTokens: 256, MaxModelLen: 256, Latency: &fake.Linear{Base: 10}})
		if err != nil {
			t.Fatal(err)
		}
		insts = append(insts, in)
	}
	for i, in := range insts {
		if err := in.Submit(&instance.Request{ID: int64(i + 1), Prompt: tokens(128, int32(1000*i)), OutputLen: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	for k := 0; k < 4 && eng.Step(0); k++ {
	}
	used := insts[0].KV().UsedBlocks()
	if used == 0 || insts[1].KV().UsedBlocks() != used {
		t.Fatalf("used blocks %d and %d, want the same non-zero count", used, insts[1].KV().UsedBlocks())
	}
	cfg := Config{Routing: Weighted}
	cfg.Scorers, _ = ParseScorers("kv-utilization:1")
	rt := newRouter(&cfg, insts, make([]int, 2), rand.New(rand.NewPCG(1, 2)), nil)
	r := &instance.Request{ID: 9, Prompt: tokens(8, 5)}
	if got := rt.pick(eng.Now(), r, []int{0, 1}, poolAll); got != 1 {
		t.Errorf("picked instance %d, want 1 (the larger cache)", got)
	}
	for i, total := range []int{64, 256} {
		if got, want := rt.snap[i].kvUtil, float64(used)/float64(total); got != want {
			t.Errorf("instance %d: kv utilisation %g, want %d/%d = %g", i, got, used, total, want)
		}
	}
}
