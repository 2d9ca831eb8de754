package kvcache

import "math"

// Private blocks (Seq.Private). A block whose tokens follow a sequence's
// private position can be hit only by that sequence, after a preemption,
// so hashing it and indexing it is wasted work: in a workload without
// shared prefixes that is every block. Nor does such a block need the
// shared state of c.blocks (a reference count, a hash, its free-list
// position): only its holder refers to it. So a private block lives in its
// sequence's block table while held and in the free ring once released,
// and c.blocks is neither read nor written for it. At a cluster's scale,
// where the blocks' states of 16 instances do not fit the core's cache,
// those reads and writes were most of the allocation's cost.
//
// When a sequence releases a full private block, it notes the serial of
// the block's free-ring entry. The block is still cached exactly while that
// entry has not reached the free head (its serial is above c.popped), and
// the sequence finds it again at the same place of its block table. A hit,
// a miss, an eviction and every counter thus come out as with hashes,
// which TestPrivateMatchesHashed, the instance's
// TestPrivateDeclarationChangesNothing and the replay's
// TestPrivatePromptsChangeNothing check on random runs.
//
// The CPU tier is keyed by hash; with it on, every block is hashed.

// privateBlock is the first private block of s, or MaxInt.
func (c *Cache) privateBlock(s *Seq) int {
	if !s.Private || c.cpu != nil {
		return math.MaxInt
	}
	return c.div(s.PrivateFrom)
}

// noteRelease records the release serial of s's full private block k.
func (s *Seq) noteRelease(k int, serial uint64) {
	if k >= len(s.serials) {
		s.serials = append(s.serials, make([]uint64, k+1-len(s.serials))...)
	}
	s.serials[k] = serial
}

// find returns the block holding s's block k if it is cached in the GPU
// tier: through the index below the private block pb, else where s last
// held it.
func (c *Cache) find(s *Seq, k, pb int) (int32, bool) {
	if k < pb {
		return c.lookup(s.BlockHash(k, c.b))
	}
	return c.findPrivate(s, k)
}

// findPrivate returns the block holding s's private block k if it is still
// cached: released full, at the last release, and not yet reached by the
// free head.
func (c *Cache) findPrivate(s *Seq, k int) (int32, bool) {
	if k >= s.held || k >= len(s.serials) || s.serials[k] <= c.popped {
		return -1, false
	}
	return s.blocks[:s.held][k], true
}
