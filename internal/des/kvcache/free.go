package kvcache

import (
	"fmt"
	"math"
	"sort"
)

// The free list (docs/simulator.md §6.1: LRU, the head is evicted first, released blocks
// join the tail) is a FIFO ring of entries in release order. An entry is a
// block id with two flags: freeFull when the block was full at its release
// (taking it evicts cached tokens) and freePrivate for a private block
// (private.go), whose state in c.blocks is clear and is never read or
// written. Every entry carries its release serial, increasing along the
// ring; the serial of the last entry taken from the head is c.popped, so a
// released private block is still cached exactly while its serial is
// above it.
//
// A block taken off the list by a prefix hit leaves a tombstone (freeGone)
// at its entry, found through the block's ring position (fpos) or, for a
// private block, by its serial. Taking the head thus reads the ring only,
// and touches the block's state only when the block is not private.
// Tombstones are skipped at the head; when the ring is full (they pile up
// only from hits) it is compacted in place, keeping order; it has room for
// 2T entries, so a compaction frees at least half of it.
type freeRing struct {
	ids     []uint32
	serials []uint64
	mask    uint64
	fh, ft  uint64 // window [fh, ft) of positions; ids[p & mask]
}

const (
	freeFull    = 1 << 31
	freePrivate = 1 << 30
	freeID      = freePrivate - 1    // the block id bits of an entry
	freeGone    = math.MaxUint32     // tombstone
	maxBlocks   = freeID             // block ids must leave the flag bits clear
	_           = uint32(freeID + 1) // the flags fit an entry
)

func newFreeRing(blocks int) freeRing {
	size := tableSize(2 * blocks)
	return freeRing{ids: make([]uint32, size), serials: make([]uint64, size), mask: uint64(size - 1)}
}

// pushTail appends block i (free now) with the given flags and returns the
// entry's release serial. A block that is not private records where its
// entry is.
func (c *Cache) pushTail(i int32, flags uint32) uint64 {
	r := &c.ring
	if r.ft-r.fh == uint64(len(r.ids)) {
		c.compactFree()
	}
	c.serial++
	p := r.ft
	r.ids[p&r.mask] = uint32(i) | flags
	r.serials[p&r.mask] = c.serial
	r.ft++
	c.free++
	if flags&freePrivate == 0 {
		bl := &c.blocks[i]
		bl.inFree = true
		bl.fpos = uint32(p)
	}
	return c.serial
}

// unlink takes free block i (not private) off the free list for a prefix
// hit.
func (c *Cache) unlink(i int32) {
	bl := &c.blocks[i]
	bl.inFree = false
	c.ring.ids[uint64(bl.fpos)&c.ring.mask] = freeGone
	c.free--
}

// takePrivate takes the private block released with the given serial off
// the free list for a hit by its owner. The serial must still be in the
// ring (above c.popped).
//
// A sequence takes its private blocks back in block order, and a Preempt
// released them last block first, one after another: the entry sought is
// usually just before the one taken last (c.taken), and is looked for
// there before the ring is searched.
func (c *Cache) takePrivate(serial uint64) {
	r := &c.ring
	pos := c.taken - 1 // absolute position; checked against the window and the serial
	if !(pos >= r.fh && pos < r.ft && r.serials[pos&r.mask] == serial) {
		n := int(r.ft - r.fh)
		j := sort.Search(n, func(j int) bool { return r.serials[(r.fh+uint64(j))&r.mask] >= serial })
		pos = r.fh + uint64(j)
		if j == n || r.serials[pos&r.mask] != serial {
			panic(fmt.Sprintf("kvcache: private block of serial %d is not on the free list", serial))
		}
	}
	p := pos & r.mask
	if r.ids[p] == freeGone {
		panic(fmt.Sprintf("kvcache: private block of serial %d is not on the free list", serial))
	}
	r.ids[p] = freeGone
	c.taken = pos
	c.free--
	c.privHeld++
}

// freeHead returns the entry of the least recently released free block,
// dropping the tombstones before it. There must be a free block.
func (c *Cache) freeHead() uint32 {
	r := &c.ring
	for {
		if e := r.ids[r.fh&r.mask]; e != freeGone {
			return e
		}
		r.fh++
	}
}

// popFree takes the LRU head for a new use, private or not, and returns it.
// A block that is not private gets reference count 1; the hash of the one
// taken is dropped from the index (lazy eviction: its entry goes stale).
func (c *Cache) popFree(private bool) int32 {
	e := c.freeHead()
	r := &c.ring
	c.popped = r.serials[r.fh&r.mask]
	r.fh++
	c.free--
	i := int32(e & freeID)
	if e&freeFull != 0 {
		c.stats.Evictions++
	}
	if e&freePrivate == 0 {
		bl := &c.blocks[i]
		if bl.inMemo {
			c.memoEvict(i)
		}
		if bl.indexed && c.journalOn {
			c.journal = append(c.journal, IndexChange{Hash: c.hashes[i]})
		}
		*bl = block{}
	}
	if private {
		c.privHeld++
	} else {
		c.blocks[i].ref = 1
	}
	return i
}

// compactFree drops the tombstones, keeping the order of the live entries.
func (c *Cache) compactFree() {
	r := &c.ring
	w := r.fh
	for p := r.fh; p < r.ft; p++ {
		if e := r.ids[p&r.mask]; e != freeGone {
			r.ids[w&r.mask] = e
			r.serials[w&r.mask] = r.serials[p&r.mask]
			if e&freePrivate == 0 {
				c.blocks[e&freeID].fpos = uint32(w)
			}
			w++
		}
	}
	r.ft = w
}

// checkFree verifies the ring: serials increase along it; a live entry of
// a block that is not private is the block's recorded entry, with
// reference count 0 and the full flag matching its hash; a private one has
// clear block state; and the live entries number c.free. It returns the
// number of live entries that are not private.
func (c *Cache) checkFree() (listed int, err error) {
	r := &c.ring
	if r.ft-r.fh > uint64(len(r.ids)) {
		return 0, fmt.Errorf("kvcache: free ring window %d exceeds its size %d", r.ft-r.fh, len(r.ids))
	}
	n := 0
	var last uint64
	for p := r.fh; p < r.ft; p++ {
		if s := r.serials[p&r.mask]; s <= last || s <= c.popped {
			return 0, fmt.Errorf("kvcache: free ring serial %d at %d after %d (popped %d)", s, p, last, c.popped)
		} else {
			last = s
		}
		e := r.ids[p&r.mask]
		if e == freeGone {
			continue
		}
		i := e & freeID
		if int(i) >= c.t {
			return 0, fmt.Errorf("kvcache: free ring holds block id %d", i)
		}
		bl := &c.blocks[i]
		if e&freePrivate != 0 {
			if *bl != (block{fpos: bl.fpos}) {
				return 0, fmt.Errorf("kvcache: free private block %d has state %+v", i, *bl)
			}
		} else {
			if !bl.inFree || bl.fpos != uint32(p) {
				return 0, fmt.Errorf("kvcache: free ring entry at %d for block %d, which is not free there", p, i)
			}
			if bl.ref != 0 {
				return 0, fmt.Errorf("kvcache: free block %d has ref %d", i, bl.ref)
			}
			if (e&freeFull != 0) != bl.hashed {
				return 0, fmt.Errorf("kvcache: free block %d: entry says full %v, block %v", i, e&freeFull != 0, bl.hashed)
			}
			listed++
		}
		n++
	}
	if n != c.free {
		return 0, fmt.Errorf("kvcache: free list length %d, counter %d", n, c.free)
	}
	return listed, nil
}
