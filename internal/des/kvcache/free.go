package kvcache

import "fmt"

// The free list (spec §6.1: LRU, the head is evicted first, released blocks
// join the tail) is a FIFO ring of block ids with lazy removal. A block
// taken off the list by a prefix hit only loses its inFree mark; its ring
// entry goes stale and is skipped when it reaches the head. A block's live
// entry is the one at the ring position recorded in the block (fpos), so a
// block freed, hit and freed again has exactly one live entry, at its latest
// release, and the live entries are the free blocks in release order: the
// order of the doubly linked list this replaces. Pushing touches only the
// ring's tail and the block itself, and popping only the head entry and its
// block, where the linked list also wrote both neighbours of every block it
// unlinked: at a cluster's scale those were cache misses on every
// allocation. When the ring is full (stale entries pile up only from hits),
// it is compacted in place, keeping order; it has room for 2T entries, so
// a compaction frees at least half of it.
type freeRing struct {
	ids    []int32
	mask   uint64
	fh, ft uint64 // live window [fh, ft) of positions; ids[p & mask]
}

func newFreeRing(blocks int) freeRing {
	size := 16
	for size < 2*blocks {
		size *= 2
	}
	return freeRing{ids: make([]int32, size), mask: uint64(size - 1)}
}

// live reports whether ring position p holds block i's live entry.
func (c *Cache) live(i int32, p uint64) bool {
	bl := &c.blocks[i]
	return bl.inFree && bl.fpos == uint32(p)
}

// pushTail appends block i (reference count 0) to the free list.
func (c *Cache) pushTail(i int32) {
	r := &c.ring
	if r.ft-r.fh == uint64(len(r.ids)) {
		c.compactFree()
	}
	bl := &c.blocks[i]
	bl.inFree = true
	bl.fpos = uint32(r.ft)
	r.ids[r.ft&r.mask] = i
	r.ft++
	c.free++
}

// unlink takes free block i off the free list (its ring entry goes stale).
func (c *Cache) unlink(i int32) {
	c.blocks[i].inFree = false
	c.free--
}

// freeHead returns the least recently released free block, dropping the
// stale entries before it. There must be a free block.
func (c *Cache) freeHead() int32 {
	r := &c.ring
	for {
		p := r.fh
		i := r.ids[p&r.mask]
		if c.live(i, p) {
			return i
		}
		r.fh++
	}
}

// compactFree drops the stale entries, keeping the order of the live ones.
func (c *Cache) compactFree() {
	r := &c.ring
	w := r.fh
	for p := r.fh; p < r.ft; p++ {
		i := r.ids[p&r.mask]
		if c.live(i, p) {
			r.ids[w&r.mask] = i
			c.blocks[i].fpos = uint32(w)
			w++
		}
	}
	r.ft = w
}

// checkFree verifies that the live entries are exactly the blocks marked
// free, each once, with reference count 0, and that they number c.free.
func (c *Cache) checkFree() error {
	r := &c.ring
	if r.ft-r.fh > uint64(len(r.ids)) {
		return fmt.Errorf("kvcache: free ring window %d exceeds its size %d", r.ft-r.fh, len(r.ids))
	}
	n := 0
	for p := r.fh; p < r.ft; p++ {
		i := r.ids[p&r.mask]
		if i < 0 || int(i) >= c.t {
			return fmt.Errorf("kvcache: free ring holds block id %d", i)
		}
		if !c.live(i, p) {
			continue
		}
		if bl := &c.blocks[i]; bl.ref != 0 {
			return fmt.Errorf("kvcache: free block %d has ref %d", i, bl.ref)
		}
		n++
	}
	if n != c.free {
		return fmt.Errorf("kvcache: free list length %d, counter %d", n, c.free)
	}
	return nil
}
