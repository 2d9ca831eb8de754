package kvcache

import (
	"math/rand/v2"
	"testing"
)

// TestJournalReplaysMembership: applying the drained journal to a set kept
// since the previous drain gives exactly the hashes Contains finds, after
// random admissions, growth, releases and evictions.
func TestJournalReplaysMembership(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	for round := 0; round < 100; round++ {
		c := mustNew(t, Config{Blocks: 1 + rng.IntN(20), BlockSize: 1 + rng.IntN(5), CPUBlocks: rng.IntN(4)})
		c.EnableJournal()
		view := map[Hash]bool{}
		seen := map[Hash]bool{}
		var live []*Seq
		for op := 0; op < 200; op++ {
			switch r := rng.IntN(3); {
			case r == 0 || len(live) == 0:
				s := seqOf(1+rng.IntN(30), int32(rng.IntN(3))*1000)
				for k := 0; k < len(s.Prompt)/c.BlockSize(); k++ {
					seen[s.BlockHash(k, c.BlockSize())] = true
				}
				g, cp := c.Match(s, len(s.Prompt))
				cached := min(g+cp, (len(s.Prompt)-1)/c.BlockSize()) * c.BlockSize()
				if _, ok := c.Admit(s, cached, len(s.Prompt)-cached); ok {
					live = append(live, s)
				}
			case r == 1:
				s := live[rng.IntN(len(live))]
				c.Grow(s, 1+rng.IntN(3))
				for k := 0; k < s.Tokens()/c.BlockSize(); k++ {
					seen[s.BlockHash(k, c.BlockSize())] = true
				}
			default:
				i := rng.IntN(len(live))
				c.Release(live[i])
				live = append(live[:i], live[i+1:]...)
			}
			if rng.IntN(4) > 0 {
				continue
			}
			c.DrainJournal(func(ch IndexChange) {
				if ch.Added {
					view[ch.Hash] = true
				} else {
					delete(view, ch.Hash)
				}
			})
			for h := range seen {
				if got, want := view[h], c.Contains(h); got != want {
					t.Fatalf("round %d op %d: journal view has %v = %v, Contains says %v", round, op, h, got, want)
				}
			}
		}
	}
}
