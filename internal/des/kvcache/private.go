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
// When a preempted sequence releases a full private block k (Preempt), it
// notes the block and the serial of its free-ring entry at position k of
// its notes. The block still holds those tokens exactly while that entry
// has not reached the free head (its serial is above c.popped). A note
// stays until a later Preempt releases block k full again: a shorter
// holding in between leaves the earlier copy findable, as the index does
// for a hashed block (its newest full copy stays indexed). A hit, a miss,
// an eviction and every counter thus come out as with hashes, which
// TestPrivateMatchesHashed, the instance's
// TestPrivateDeclarationChangesNothing and the replay's
// TestPrivatePromptsChangeNothing check on random runs.
//
// The CPU tier is keyed by hash; with it on, every block is hashed.

// note is where a sequence's full private block went at a Preempt.
type note struct {
	serial uint64 // of its free-ring entry; 0 = none
	block  int32
}

// privateBlock is the first private block of s, or MaxInt.
func (c *Cache) privateBlock(s *Seq) int {
	if !s.Private || c.cpu != nil {
		return math.MaxInt
	}
	return c.div(max(s.PrivateFrom, 0))
}

// noteRelease records that s's full private block k, block i, was
// released with the given serial.
func (s *Seq) noteRelease(k int, i int32, serial uint64) {
	if k >= len(s.notes) {
		s.notes = append(s.notes, make([]note, k+1-len(s.notes))...)
	}
	s.notes[k] = note{serial: serial, block: i}
}

// find returns the block holding s's block k if it is cached in the GPU
// tier: through the index below the private block pb, else by s's note.
func (c *Cache) find(s *Seq, k, pb int) (int32, bool) {
	if k < pb {
		return c.lookup(s.BlockHash(k, c.b))
	}
	return c.findPrivate(s, k)
}

// privateRun is the number of s's private blocks from k on, below limit,
// that are still cached one after another: the first private blocks k,
// k+1, … findPrivate finds. A sequence's notes from its private block on
// have strictly decreasing serials (a Preempt notes its full private
// blocks from the first one up, releasing them last block first, and a
// note left from an earlier Preempt, past them, is older), so the blocks
// evicted since are the run's last ones and a binary search finds its end:
// a request waiting to be admitted again is matched at every step, and a
// block-by-block match cost as many probes as it held blocks
// (TestPrivateRunMatchesScan checks it against findPrivate).
func (c *Cache) privateRun(s *Seq, k, limit int) int {
	lo, hi := k, min(limit, len(s.notes))
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.notes[mid].serial > c.popped {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return max(lo-k, 0)
}

// findPrivate returns the block holding s's private block k if it is still
// cached.
func (c *Cache) findPrivate(s *Seq, k int) (int32, bool) {
	if k >= len(s.notes) || s.notes[k].serial <= c.popped {
		return -1, false
	}
	return s.notes[k].block, true
}
