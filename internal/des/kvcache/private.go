package kvcache

import "math"

// Private blocks (Seq.Private). A block whose tokens follow a sequence's
// private position can be hit only by that sequence, after a preemption,
// so hashing it and indexing it is wasted work: in a workload without
// shared prefixes that is every block, and the index's random accesses
// are most of a busy cache's cost. Such a block is neither hashed nor
// indexed. Every block counts the times it was taken from the free list
// (its epoch), and the sequence notes the epoch of each private block it
// filled. After a release its block table still holds the ids it had, and
// block k is still cached exactly when the block at that id is full and
// has kept the noted epoch: taking it for other tokens changes the epoch,
// and nothing else can write it. So a hit, a miss, an eviction and every
// counter come out as with hashes, which TestPrivateMatchesHashed and the
// instance's TestPrivateDeclarationChangesNothing check on random runs.
// The epoch sits beside the reference count, which the allocation touches
// anyway; the hash array is not touched at all. It has 32 bits: a false
// match would need the same block taken exactly 2³² times while its
// sequence waits.
//
// The CPU tier is keyed by hash; with it on, every block is hashed.

// privateBlock is the first private block of s, or MaxInt.
func (c *Cache) privateBlock(s *Seq) int {
	if !s.Private || c.cpu != nil {
		return math.MaxInt
	}
	return c.div(s.PrivateFrom)
}

// notePrivate records that s filled its private block k with block i.
func (s *Seq) notePrivate(k int, epoch uint32) {
	if k >= len(s.epochs) {
		s.epochs = append(s.epochs, make([]uint32, k+1-len(s.epochs))...)
	}
	s.epochs[k] = epoch
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
// cached.
func (c *Cache) findPrivate(s *Seq, k int) (int32, bool) {
	if k >= s.held || k >= len(s.epochs) {
		return -1, false
	}
	i := s.blocks[:s.held][k]
	if bl := &c.blocks[i]; !bl.hashed || bl.epoch != s.epochs[k] {
		return -1, false
	}
	return i, true
}
