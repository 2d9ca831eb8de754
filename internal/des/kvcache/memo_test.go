package kvcache

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// matchByLookup is Match as it was before the memo: every leading block
// looked up (GPU part only).
func matchByLookup(c *Cache, s *Seq, target int) int {
	full := c.div(target)
	k := 0
	for shared := min(full, c.privateBlock(s)); k < shared; k++ {
		if _, ok := c.lookup(s.BlockHash(k, c.b)); !ok {
			break
		}
	}
	return k
}

// TestMemoMatchesLookups runs the same random operations on two caches:
// one keeps its match memo, the other forgets it before every Match (so it
// looks every block up). Sequences share prefixes and wait (matched step
// after step, admissions failing for lack of blocks, several waiting in
// turn) while others grow, evict, complete and are preempted. Every match,
// admission, block id and counter must agree, the memo's matches must
// equal plain lookups, and both caches must pass Check (which verifies the
// memo) after every operation.
func TestMemoMatchesLookups(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for round := 0; round < 300; round++ {
		b := 1 + rng.IntN(4)
		blocks := 4 + rng.IntN(40)
		var twins [2]*Cache
		for v := range twins {
			twins[v] = mustNew(t, Config{Blocks: blocks, BlockSize: b, CPUBlocks: []int{0, 0, 0, 5}[round%4]})
		}
		prefixes := [][]int32{seqOf(30, 1000).Prompt, seqOf(50, 2000).Prompt}
		type pair struct {
			s       [2]*Seq
			running bool
		}
		var waiting, running []*pair
		ids := int32(0)
		newPair := func() *pair {
			ids++
			p := prefixes[rng.IntN(len(prefixes))]
			prompt := append(slices.Clone(p[:rng.IntN(len(p))]), seqOf(1+rng.IntN(20), ids*100).Prompt...)
			var q pair
			for v := range q.s {
				q.s[v] = &Seq{Prompt: prompt, Seed: uint64(ids), ExpectedTokens: len(prompt) + 8}
			}
			return &q
		}
		for op := 0; op < 300; op++ {
			switch r := rng.IntN(10); {
			case r < 2 || len(waiting) == 0:
				waiting = append(waiting, newPair())
			case r < 6: // the head (or another) tries to get in
				i := 0
				if rng.IntN(3) == 0 {
					i = rng.IntN(len(waiting))
				}
				p := waiting[i]
				var got [2][3]int
				var ok [2]bool
				for v, c := range twins {
					s := p.s[v]
					if v == 1 {
						c.dropMemo()
					}
					target := len(s.Prompt)
					want := matchByLookup(c, s, target)
					gpu, cpu := c.Match(s, target)
					if gpu != want && c.cpu == nil {
						t.Fatalf("round %d op %d: Match found %d GPU blocks, lookups %d", round, op, gpu, want)
					}
					cached := b * min(gpu+cpu, (target-1)/b)
					var reload int64
					reload, ok[v] = c.Admit(s, cached, target-cached)
					got[v] = [3]int{gpu, cpu, int(reload)}
				}
				if got[0] != got[1] || ok[0] != ok[1] {
					t.Fatalf("round %d op %d: match/admit %v %v, without memo %v %v", round, op, got[0], ok[0], got[1], ok[1])
				}
				if ok[0] {
					waiting = slices.Delete(waiting, i, i+1)
					running = append(running, p)
				}
			case r < 8 && len(running) > 0: // a running sequence grows (evicting)
				p := running[rng.IntN(len(running))]
				n := 1 + rng.IntN(2*b)
				if twins[0].Grow(p.s[0], n) != twins[1].Grow(p.s[1], n) {
					t.Fatalf("round %d op %d: Grow differs", round, op)
				}
			case len(running) > 0: // completes, or is preempted back to the queue
				i := rng.IntN(len(running))
				p := running[i]
				running = slices.Delete(running, i, i+1)
				preempt := rng.IntN(3) == 0
				for v, c := range twins {
					if preempt {
						c.Preempt(p.s[v])
					} else {
						c.Release(p.s[v])
						c.Recycle(p.s[v])
					}
				}
				if preempt {
					waiting = append([]*pair{p}, waiting...)
				}
			}
			for v, c := range twins {
				if err := c.Check(); err != nil {
					t.Fatalf("round %d op %d cache %d: %v", round, op, v, err)
				}
			}
			if twins[0].Stats() != twins[1].Stats() || twins[0].FreeBlocks() != twins[1].FreeBlocks() {
				t.Fatalf("round %d op %d: stats %+v / %+v", round, op, twins[0].Stats(), twins[1].Stats())
			}
			for _, p := range running {
				if !slices.Equal(p.s[0].blocks, p.s[1].blocks) {
					t.Fatalf("round %d op %d: block tables %v / %v", round, op, p.s[0].blocks, p.s[1].blocks)
				}
			}
		}
	}
}

// TestMatchAfterPreempt: a preempted sequence is matched again through the
// blocks it held (Seq.held) only where they still hold its hashes: at once
// after its preemption it finds them all, the same blocks; once another
// sequence has taken them over for other tokens it finds none, as lookups
// do.
func TestMatchAfterPreempt(t *testing.T) {
	c := mustNew(t, Config{Blocks: 4, BlockSize: 2})
	s := seqOf(8, 100)
	s.ExpectedTokens = 8
	if _, ok := c.Admit(s, 0, 8); !ok {
		t.Fatal("admit refused")
	}
	held := slices.Clone(s.blocks)
	c.Preempt(s)
	if gpu, _ := c.Match(s, 8); gpu != 4 || !slices.Equal(c.memo.found, held) {
		t.Fatalf("matched %d blocks %v after the preemption, want 4: %v", gpu, c.memo.found, held)
	}
	o := seqOf(8, 900) // takes every block over for other tokens
	if _, ok := c.Admit(o, 0, 8); !ok {
		t.Fatal("admit of the other sequence refused")
	}
	c.Release(o)
	if gpu, _ := c.Match(s, 8); gpu != 0 || matchByLookup(c, s, 8) != 0 {
		t.Fatalf("matched %d blocks held by another sequence's tokens", gpu)
	}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
}
