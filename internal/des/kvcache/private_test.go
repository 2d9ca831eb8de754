package kvcache

import (
	"math/rand/v2"
	"testing"
)

// TestPrivateMatchesHashed runs the same random admissions, growth,
// preemptions (release, later re-admission of the same sequence) and
// completions on two caches: in one every sequence declares its tail after
// its group's shared prefix private, in the other nothing is private. Every
// match, every block id handed out and every counter must agree, and each
// cache must pass Check after every operation.
func TestPrivateMatchesHashed(t *testing.T) {
	t.Run("a shorter holding keeps the earlier blocks", func(t *testing.T) {
		var got [2]int
		for v := range got {
			c := mustNew(t, Config{Blocks: 10, BlockSize: 1})
			s := &Seq{Prompt: []int32{11, 12, 13, 14}, Seed: 1, Private: v == 1}
			c.Admit(s, 0, 4)
			c.Preempt(s)
			c.Admit(s, 0, 1)
			c.Preempt(s)
			got[v], _ = c.Match(s, 4)
		}
		if got[0] != 4 || got[1] != 4 {
			t.Errorf("blocks found again: hashed %d, private %d, want 4 and 4", got[0], got[1])
		}
	})
	rng := rand.New(rand.NewPCG(5, 17))
	for round := 0; round < 300; round++ {
		b := 1 + rng.IntN(5)
		cfg := Config{Blocks: 1 + rng.IntN(30), BlockSize: b}
		pool := NewPool()
		twins := [2]*Cache{mustNew(t, cfg), mustNew(t, Config{Blocks: cfg.Blocks, BlockSize: b, Pool: pool})}
		type pair struct {
			s       [2]*Seq
			running bool
		}
		groups := [][]int32{nil, seqOf(7, -5000).Prompt, seqOf(12, -6000).Prompt}
		var all []*pair
		ids := 0
		newPair := func() *pair {
			ids++
			id := ids
			g := groups[rng.IntN(len(groups))]
			tail := seqOf(1+rng.IntN(20), int32(id)*100).Prompt // ids unique: tails private
			prompt := append(append([]int32(nil), g...), tail...)
			p := &pair{}
			for v := range p.s {
				p.s[v] = &Seq{Prompt: prompt, Seed: uint64(id), ExpectedTokens: len(prompt) + rng.IntN(8)}
			}
			p.s[1].Private, p.s[1].PrivateFrom = true, len(g)
			return p
		}
		admit := func(p *pair) bool {
			// A preempted sequence comes back with what it had generated,
			// or (not something the instance does) with fewer tokens than
			// it held before: blocks past them must stay findable.
			target := max(len(p.s[0].Prompt), len(p.s[0].notes)*b+rng.IntN(b))
			if rng.IntN(3) == 0 {
				target = 1 + rng.IntN(target)
			}
			var ok [2]bool
			var got [2][2]int
			for v, c := range twins {
				s := p.s[v]
				gpu, cpu := c.Match(s, target)
				got[v] = [2]int{gpu, cpu}
				cached := min(gpu+cpu, (target-1)/b) * b
				_, ok[v] = c.Admit(s, cached, target-cached)
			}
			if got[0] != got[1] || ok[0] != ok[1] {
				t.Fatalf("round %d: admission of %v (notes %d tokens %d): hashed matched %v ok %v, private %v ok %v", round, p.s[1].Prompt, len(p.s[1].notes), p.s[1].nTok, got[0], ok[0], got[1], ok[1])
			}
			return ok[0]
		}
		for op := 0; op < 300; op++ {
			var running []*pair
			var waiting []*pair
			for _, p := range all {
				if p.running {
					running = append(running, p)
				} else {
					waiting = append(waiting, p)
				}
			}
			switch r := rng.IntN(5); {
			case r == 0 || len(all) == 0:
				p := newPair()
				all = append(all, p)
				p.running = admit(p)
			case r == 1 && len(waiting) > 0:
				p := waiting[rng.IntN(len(waiting))]
				p.running = admit(p)
			case r == 2 && len(running) > 0:
				p := running[rng.IntN(len(running))]
				n := 1 + rng.IntN(2*b)
				var ok [2]bool
				for v, c := range twins {
					ok[v] = c.Grow(p.s[v], n)
				}
				if ok[0] != ok[1] {
					t.Fatalf("round %d op %d: grow: hashed %v, private %v", round, op, ok[0], ok[1])
				}
			case r == 3 && len(running) > 0: // preemption: released, re-admitted later
				p := running[rng.IntN(len(running))]
				for v, c := range twins {
					c.Preempt(p.s[v])
				}
				p.running = false
			case len(running) > 0: // completion
				p := running[rng.IntN(len(running))]
				for v, c := range twins {
					c.Release(p.s[v])
					c.Recycle(p.s[v])
				}
				for i := range all {
					if all[i] == p {
						all = append(all[:i], all[i+1:]...)
						break
					}
				}
			}
			for _, p := range all {
				if a, c := p.s[0].blocks, p.s[1].blocks; len(a) != len(c) || p.s[0].nTok != p.s[1].nTok {
					t.Fatalf("round %d op %d: block tables %v and %v", round, op, a, c)
				} else {
					for i := range a {
						if a[i] != c[i] {
							t.Fatalf("round %d op %d: block tables %v and %v", round, op, a, c)
						}
					}
				}
			}
			if a, c := twins[0].Stats(), twins[1].Stats(); a != c {
				t.Fatalf("round %d op %d: stats hashed %+v, private %+v", round, op, a, c)
			}
			for _, p := range all {
				checkPrivateRun(t, twins[1], p.s[1])
			}
			for v, c := range twins {
				if err := c.Check(); err != nil {
					t.Fatalf("round %d op %d twin %d: %v", round, op, v, err)
				}
			}
		}
	}
}

// checkPrivateRun compares privateRun, from every private block of s on,
// with findPrivate block by block (TestPrivateRunMatchesScan).
func checkPrivateRun(t *testing.T, c *Cache, s *Seq) {
	t.Helper()
	pb := c.privateBlock(s)
	for k := pb; k <= len(s.notes); k++ {
		scan := 0
		for j := k; j < len(s.notes); j++ {
			if _, ok := c.findPrivate(s, j); !ok {
				break
			}
			scan++
		}
		limit := k + scan/2 + 1
		if got := c.privateRun(s, k, len(s.notes)+1); got != scan {
			t.Fatalf("private run from block %d: %d, a scan finds %d (notes %+v, popped %d)", k, got, scan, s.notes, c.popped)
		}
		if got, want := c.privateRun(s, k, limit), min(scan, limit-k); got != want {
			t.Fatalf("private run from block %d below %d: %d, want %d", k, limit, got, want)
		}
	}
}

// TestPrivateRunMatchesScan: a sequence preempted again and again, with
// holdings longer and shorter than before and blocks evicted in between,
// keeps notes whose run privateRun finds as a block-by-block scan does.
func TestPrivateRunMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for round := 0; round < 200; round++ {
		c := mustNew(t, Config{Blocks: 8 + rng.IntN(40), BlockSize: 1 + rng.IntN(3)})
		b := c.BlockSize()
		s := &Seq{Prompt: seqOf(4+rng.IntN(30), 0).Prompt, Seed: 1, Private: true, PrivateFrom: rng.IntN(4)}
		other := &Seq{Prompt: seqOf(40, 1000).Prompt, Seed: 2}
		for op := 0; op < 40; op++ {
			target := 1 + rng.IntN(len(s.Prompt))
			gpu, _ := c.Match(s, target)
			cached := min(gpu, (target-1)/b) * b
			if _, ok := c.Admit(s, cached, target-cached); ok {
				c.Grow(s, rng.IntN(3*b))
				c.Preempt(s)
			}
			checkPrivateRun(t, c, s)
			if n := rng.IntN(c.TotalBlocks()); c.FreeBlocks() >= n && n > 0 { // evict some
				c.Admit(other, 0, n*b)
				c.Release(other)
				c.Recycle(other)
				other.Prompt, other.Seed = seqOf(40, int32(1000*(op+2))).Prompt, uint64(op+3)
			}
			checkPrivateRun(t, c, s)
			if err := c.Check(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
