package kvcache

// hashIndex maps block hashes to block ids with open addressing and linear
// probing. Deletion is lazy: evicting a block only clears the block's hash,
// which makes its index entry stale (a lookup verifies that the block still
// holds the hash); a later insert of the same hash reuses the slot, and the
// table is rebuilt from its live entries when stale ones fill half of it.
// This keeps the eviction path free of random memory accesses, which dominate
// the cost of a busy cache.
//
// A slot is 8 bytes: a 32-bit tag (the top half of Hash.Hi) and the block
// id. A tag match is confirmed against the block's full 128-bit hash, so the
// table stays small enough to sit in the core's cache (a registration is one
// random access, and most of a busy simulation's cost is registrations).
type hashIndex struct {
	slots []indexSlot
	mask  uint64
	n     int // occupied slots, live or stale
	limit int // rebuild when n exceeds it
}

type indexSlot struct {
	tag uint32
	v1  int32 // block id + 1; 0 = empty (clearing the table is a memclr)
}

func newHashIndex(blocks int) hashIndex {
	size := tableSize(4 * blocks)
	return hashIndex{slots: make([]indexSlot, size), mask: uint64(size - 1), limit: size / 2}
}

func tagOf(h Hash) uint32 { return uint32(h.Hi >> 32) }

// holds reports whether block v holds hash h.
func (c *Cache) holds(v int32, h Hash) bool {
	bl := &c.blocks[v]
	return bl.hashed && c.hashes[v] == h
}

// lookup returns the indexed block holding h. Slots whose block is not the
// indexed holder of h (another hash with the same tag, a stale entry) are
// passed over.
func (c *Cache) lookup(h Hash) (int32, bool) {
	x := &c.index
	tag := tagOf(h)
	for i := h.Lo & x.mask; ; i = (i + 1) & x.mask {
		s := x.slots[i]
		if s.v1 == 0 {
			return -1, false
		}
		if v := s.v1 - 1; s.tag == tag && c.holds(v, h) && c.blocks[v].indexed {
			return v, true
		}
	}
}

// register makes v the indexed holder of h. When another block already
// holds h (a prompt's last block recomputed while its cached copy sits on the
// free list, or two requests filling the same prefix in one step), the newer
// copy takes over the slot: the older one can no longer be hit, and when it
// was a released copy it sits ahead of the newer one on the free list, so it
// is evicted first and the hash stays findable as long as any copy is
// cached. (It also makes a private block, found again through its
// sequence's notes, behave exactly as a hashed one: private.go.)
// Stale slots are never taken over (a tag does not tell a stale entry of h
// from another hash's), only dropped by a rebuild.
func (c *Cache) register(h Hash, v int32) {
	x := &c.index
	tag := tagOf(h)
	for i := h.Lo & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.v1 == 0 {
			*s = indexSlot{tag: tag, v1: v + 1}
			c.indexed(h, v)
			x.n++
			if x.n > x.limit {
				c.rebuildIndex()
			}
			return
		}
		if old := s.v1 - 1; s.tag == tag && c.holds(old, h) && c.blocks[old].indexed {
			if c.blocks[old].inMemo {
				c.memoTakeOver(old, v)
			}
			c.blocks[old].indexed = false // membership unchanged: no journal entry
			c.blocks[v].indexed = true
			s.v1 = v + 1
			return
		}
	}
}

// indexed marks block v as the canonical holder of h.
func (c *Cache) indexed(h Hash, v int32) {
	c.blocks[v].indexed = true
	if c.journalOn {
		c.journal = append(c.journal, IndexChange{Hash: h, Added: true})
	}
}

// rebuildIndex drops stale entries.
func (c *Cache) rebuildIndex() {
	x := &c.index
	clear(x.slots)
	x.n = 0
	for i := range c.blocks {
		bl := &c.blocks[i]
		if !bl.hashed || !bl.indexed {
			continue
		}
		h := c.hashes[i]
		j := h.Lo & x.mask
		for x.slots[j].v1 != 0 {
			j = (j + 1) & x.mask
		}
		x.slots[j] = indexSlot{tag: tagOf(h), v1: int32(i) + 1}
		x.n++
	}
}
