package kvcache

import "math"

// Private blocks (Seq.Private). A block whose tokens follow a sequence's
// private position can be hit only by that sequence, after a preemption,
// so hashing it and indexing it is wasted work: in a workload without
// shared prefixes that is every block, and the index's random accesses
// are most of a busy cache's cost. Such a block carries a tag instead of
// a hash: the sequence's owner id (unique across the caches of a Pool) and
// the block's position, in the hash slot, never indexed. After a release
// the sequence's block table still holds the ids it had, and block k is
// still cached exactly when the block at that id carries the tag (owner,
// k): a block reused for other tokens has lost the tag, and no other
// sequence can write it. So a hit, a miss, an eviction and every counter
// come out as with hashes, which TestPrivateMatchesHashed checks on random
// runs.
//
// The CPU tier is keyed by hash; with it on, every block is hashed.

// privateBlock is the first private block of s, or MaxInt.
func (c *Cache) privateBlock(s *Seq) int {
	if !s.Private || c.cpu != nil {
		return math.MaxInt
	}
	return c.div(s.PrivateFrom)
}

// privateTag is the tag of s's private block k.
func (c *Cache) privateTag(s *Seq, k int) Hash {
	if s.owner == 0 {
		c.pool.owners++
		s.owner = c.pool.owners
	}
	return Hash{Lo: s.owner, Hi: uint64(k) | 1<<63}
}

// find returns the block holding s's block k if it is cached in the GPU
// tier: through the index below the private block pb, else where s last
// held it.
func (c *Cache) find(s *Seq, k, pb int) (int32, bool) {
	if k < pb {
		return c.lookup(s.BlockHash(k, c.b))
	}
	if k >= s.held || s.owner == 0 {
		return -1, false
	}
	i := s.blocks[:s.held][k]
	bl := &c.blocks[i]
	if !bl.hashed || bl.indexed || c.hashes[i] != (Hash{Lo: s.owner, Hi: uint64(k) | 1<<63}) {
		return -1, false
	}
	return i, true
}
