package kvcache

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

func mustNew(t *testing.T, cfg Config) *Cache {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func seqOf(n int, base int32) *Seq {
	p := make([]int32, n)
	for i := range p {
		p[i] = base + int32(i)
	}
	return &Seq{Prompt: p, Seed: uint64(base)}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{{Blocks: 0, BlockSize: 16}, {Blocks: 4, BlockSize: 0}, {Blocks: 4, BlockSize: 4, CPUBlocks: -1}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v): got nil error, want one", cfg)
		}
	}
}

func TestHashChains(t *testing.T) {
	a := HashBlock(Hash{}, []int32{1, 2, 3, 4})
	b := HashBlock(Hash{}, []int32{1, 2, 3, 5})
	c := HashBlock(a, []int32{1, 2, 3, 4})
	if a == b || a == c || HashBlock(Hash{}, []int32{1, 2, 3, 4}) != a {
		t.Errorf("hash not a function of (prev, tokens): %v %v %v", a, b, c)
	}
	s := seqOf(8, 1)
	if got, want := s.BlockHash(1, 4), HashBlock(a, []int32{5, 6, 7, 8}); got != want {
		t.Errorf("BlockHash(1): got %v, want %v", got, want)
	}
}

func TestGrowAndRelease(t *testing.T) {
	c := mustNew(t, Config{Blocks: 4, BlockSize: 4})
	s := seqOf(10, 100)
	if _, ok := c.Admit(s, 0, 6); !ok {
		t.Fatal("admit 6 tokens into 4 blocks: refused")
	}
	if got, want := [3]int{s.Blocks(), c.FreeBlocks(), int(c.Stats().Misses)}, [3]int{2, 2, 1}; got != want {
		t.Errorf("after admit (blocks, free, misses): got %v, want %v", got, want)
	}
	if !c.Grow(s, 2) || s.Blocks() != 2 || c.Stats().Misses != 2 {
		t.Errorf("grow 2 filling block 1: blocks %d misses %d", s.Blocks(), c.Stats().Misses)
	}
	if !c.NeedsBlock(s) {
		t.Error("NeedsBlock with a full last block: got false")
	}
	if c.Grow(s, 9) {
		t.Error("grow 9 with 2 free blocks: accepted")
	}
	if c.FreeBlocks() != 2 || s.Tokens() != 8 || c.Stats().AllocFailures != 1 {
		t.Errorf("failed grow changed state: free %d tokens %d", c.FreeBlocks(), s.Tokens())
	}
	c.Release(s)
	if c.FreeBlocks() != 4 || indexedBlocks(c) != 2 {
		t.Errorf("release: free %d indexed %d, want 4 2", c.FreeBlocks(), indexedBlocks(c))
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestPrefixReuseAndLRU: a released prefix is matched by a later request; the
// free list evicts the released tail before the prefix; the vLLM rule keeps
// at least one token to compute.
func TestPrefixReuseAndLRU(t *testing.T) {
	c := mustNew(t, Config{Blocks: 4, BlockSize: 4})
	a := seqOf(8, 1)
	c.Admit(a, 0, 8)
	c.Release(a) // free order now: 2 never used, then a's block 1, then block 0
	b := seqOf(8, 1)
	gpu, cpu := c.Match(b, 8)
	if gpu != 2 || cpu != 0 {
		t.Fatalf("match identical prompt: got %d+%d, want 2+0", gpu, cpu)
	}
	// cached = b·min(k, ⌊(8−1)/4⌋) = 4: one block reused, one recomputed.
	if _, ok := c.Admit(b, 4, 4); !ok {
		t.Fatal("admit with prefix: refused")
	}
	st := c.Stats()
	if st.Hits != 1 || st.Misses != 3 {
		t.Errorf("hits/misses: got %d/%d, want 1/3", st.Hits, st.Misses)
	}
	if c.FreeBlocks() != 2 {
		t.Errorf("free: got %d, want 2", c.FreeBlocks())
	}
	// A different 12-token request needs 3 blocks; only 2 free: refused, no change.
	d := seqOf(12, 1000)
	if _, ok := c.Admit(d, 0, 12); ok {
		t.Error("admit beyond capacity accepted")
	}
	c.Release(b)
	// Now 4 free; LRU order puts b's recomputed block 1 before the shared block 0.
	e := seqOf(12, 5000)
	c.Admit(e, 0, 12) // pops 3 blocks from the head
	if g, _ := c.Match(seqOf(8, 1), 8); g != 1 {
		t.Errorf("after pressure the shared first block should survive: matched %d, want 1", g)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestAdmitCountsMatchedFreeBlocks(t *testing.T) {
	// T=3: a's two full blocks sit on the free list; a new copy of a with 4
	// extra tokens needs them pinned plus 1 fresh block: 3 ≤ 3 accepted.
	c := mustNew(t, Config{Blocks: 3, BlockSize: 4})
	a := seqOf(8, 1)
	c.Admit(a, 0, 8)
	c.Release(a)
	b := seqOf(12, 1)
	if _, ok := c.Admit(b, 8, 4); !ok {
		t.Fatal("admit 2 pinned + 1 new with 3 free: refused")
	}
	if c.FreeBlocks() != 0 {
		t.Errorf("free: got %d, want 0", c.FreeBlocks())
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCPUTierReload(t *testing.T) {
	c := mustNew(t, Config{Blocks: 3, BlockSize: 4, CPUBlocks: 8, CPUBandwidthTokensUs: 2, CPUBaseLatencyUs: 5})
	a := seqOf(8, 1)
	c.Admit(a, 0, 8)
	c.MirrorToCPU(a)
	c.Release(a)
	// Evict a's blocks from the GPU with an unrelated request.
	x := seqOf(12, 900)
	c.Admit(x, 0, 12)
	c.Release(x)
	b := seqOf(12, 1)
	gpu, cpu := c.Match(b, 12)
	if gpu != 0 || cpu != 2 {
		t.Fatalf("match: got gpu %d cpu %d, want 0 2", gpu, cpu)
	}
	reload, ok := c.Admit(b, 8, 4)
	if !ok || reload != 2*(5+2) {
		t.Errorf("reload: got %d ok %v, want 14 true", reload, ok)
	}
	if st := c.Stats(); st.CPUReloads != 2 || st.CPUMirrored != 2 {
		t.Errorf("cpu stats: %+v", st)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCPUTierLRUEviction(t *testing.T) {
	tier := newCPUTier(2)
	h := func(i uint64) Hash { return Hash{Lo: i} }
	tier.touch(h(1), 0)
	tier.touch(h(2), 0)
	tier.touch(h(1), 0) // refresh: 2 becomes least recent
	if _, ev := tier.touch(h(3), 0); !ev {
		t.Error("insert over capacity: no eviction")
	}
	if tier.has(h(2)) || !tier.has(h(1)) || !tier.has(h(3)) {
		t.Errorf("LRU evicted the wrong entry: has1 %v has2 %v has3 %v", tier.has(h(1)), tier.has(h(2)), tier.has(h(3)))
	}
}

// TestRandomConservation drives random admits, grows and releases and checks
// INV-4 after every operation.
func TestRandomConservation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for round := 0; round < 100; round++ {
		c := mustNew(t, Config{Blocks: 1 + rng.IntN(20), BlockSize: 1 + rng.IntN(5), CPUBlocks: rng.IntN(6)})
		var live []*Seq
		for op := 0; op < 200; op++ {
			switch r := rng.IntN(3); {
			case r == 0 || len(live) == 0:
				s := seqOf(1+rng.IntN(30), int32(rng.IntN(3))*1000)
				g, cp := c.Match(s, len(s.Prompt))
				k := min(g+cp, (len(s.Prompt)-1)/c.BlockSize())
				cached := k * c.BlockSize()
				if _, ok := c.Admit(s, cached, len(s.Prompt)-cached); ok {
					live = append(live, s)
				}
			case r == 1:
				s := live[rng.IntN(len(live))]
				c.Grow(s, 1+rng.IntN(3))
				c.MirrorToCPU(s)
			default:
				i := rng.IntN(len(live))
				c.Release(live[i])
				live = append(live[:i], live[i+1:]...)
			}
			if err := c.Check(); err != nil {
				t.Fatalf("round %d op %d: %v", round, op, err)
			}
			used := 0
			for _, s := range live {
				used += s.Blocks()
			}
			if used < c.UsedBlocks() {
				t.Fatalf("round %d: blocks held %d < used %d", round, used, c.UsedBlocks())
			}
		}
	}
}

func BenchmarkHashBlock(b *testing.B) {
	toks := make([]int32, 16)
	var h Hash
	for i := 0; i < b.N; i++ {
		h = HashBlock(h, toks)
	}
	_ = h
}

func indexedBlocks(c *Cache) int {
	n := 0
	for i := range c.blocks {
		if c.blocks[i].indexed {
			n++
		}
	}
	return n
}

// TestHashSpreads: flipping any bit of any token flips about half of the 128
// output bits, and equal inputs agree.
func TestHashSpreads(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	var total, n int
	for round := 0; round < 200; round++ {
		toks := make([]int32, 1+rng.IntN(16))
		for i := range toks {
			toks[i] = int32(rng.IntN(150000))
		}
		prev := Hash{Lo: rng.Uint64(), Hi: rng.Uint64()}
		h := HashBlock(prev, toks)
		for i := range toks {
			for bit := 0; bit < 31; bit += 5 {
				c := append([]int32(nil), toks...)
				c[i] ^= 1 << bit
				g := HashBlock(prev, c)
				d := bits.OnesCount64(g.Lo^h.Lo) + bits.OnesCount64(g.Hi^h.Hi)
				if d < 20 {
					t.Fatalf("flip token %d bit %d changed only %d bits", i, bit, d)
				}
				total += d
				n++
			}
		}
	}
	if avg := float64(total) / float64(n); avg < 60 || avg > 68 {
		t.Errorf("average output bits flipped %.1f, want about 64", avg)
	}
}

// TestHashSyntheticEqualsHashBlock: hashing synthetic tokens in place gives
// the hash of the written-out tokens, for every block length up to 70 and
// any offset, so a later prompt holding those ids hits the same blocks.
func TestHashSyntheticEqualsHashBlock(t *testing.T) {
	prev := HashBlock(Hash{}, []int32{1, 2, 3})
	for n := 1; n <= 70; n++ {
		for _, j0 := range []int{0, 5, 1000} {
			toks := make([]int32, n)
			for k := range toks {
				toks[k] = SyntheticToken(99, j0+k)
			}
			if got, want := hashSynthetic(prev, 99, j0, n), HashBlock(prev, toks); got != want {
				t.Fatalf("n=%d j0=%d: %x, want %x", n, j0, got, want)
			}
		}
	}
}
