package kvcache

// hashIndex maps block hashes to block ids with open addressing and linear
// probing. Deletion is lazy: evicting a block only clears the block's hash,
// which makes its index entry stale (a lookup verifies that the block still
// holds the hash); a later insert of the same hash reuses the slot, and the
// table is rebuilt from its live entries when stale ones fill half of it.
// This keeps the eviction path free of random memory accesses, which dominate
// the cost of a busy cache. Slots are 16 bytes: the key is Lo plus the upper
// half of Hi (96 bits), the full hash is checked against the block.
type hashIndex struct {
	slots []indexSlot
	mask  uint64
	n     int // occupied slots, live or stale
	limit int // rebuild when n exceeds it
}

type indexSlot struct {
	lo uint64
	hi uint32
	v  int32 // block id; -1 = empty
}

func newHashIndex(blocks int) hashIndex {
	size := 16
	for size < 4*blocks {
		size *= 2
	}
	s := make([]indexSlot, size)
	for i := range s {
		s[i].v = -1
	}
	return hashIndex{slots: s, mask: uint64(size - 1), limit: size / 2}
}

func (s *indexSlot) is(h Hash) bool { return s.lo == h.Lo && s.hi == uint32(h.Hi>>32) }

// live reports whether block v holds hash h.
func (c *Cache) live(v int32, h Hash) bool {
	bl := &c.blocks[v]
	return bl.hashed && bl.hash == h
}

// lookup returns the indexed block holding h.
func (c *Cache) lookup(h Hash) (int32, bool) {
	x := &c.index
	for i := h.Lo & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.v < 0 {
			return -1, false
		}
		if s.is(h) {
			if c.live(s.v, h) && c.blocks[s.v].indexed {
				return s.v, true
			}
			return -1, false
		}
	}
}

// register indexes h → v unless a block holding h is already indexed (the
// first copy stays canonical).
func (c *Cache) register(h Hash, v int32) {
	x := &c.index
	for i := h.Lo & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.v < 0 {
			*s = indexSlot{lo: h.Lo, hi: uint32(h.Hi >> 32), v: v}
			c.blocks[v].indexed = true
			if c.journalOn {
				c.journal = append(c.journal, IndexChange{Hash: h, Added: true})
			}
			x.n++
			if x.n > x.limit {
				c.rebuildIndex()
			}
			return
		}
		if s.is(h) {
			if !c.live(s.v, h) || !c.blocks[s.v].indexed {
				s.v = v
				c.blocks[v].indexed = true
				if c.journalOn {
					c.journal = append(c.journal, IndexChange{Hash: h, Added: true})
				}
			}
			return
		}
	}
}

// rebuildIndex drops stale entries.
func (c *Cache) rebuildIndex() {
	for i := range c.index.slots {
		c.index.slots[i].v = -1
	}
	c.index.n = 0
	for i := range c.blocks {
		bl := &c.blocks[i]
		if !bl.hashed || !bl.indexed {
			continue
		}
		x := &c.index
		j := bl.hash.Lo & x.mask
		for x.slots[j].v >= 0 {
			j = (j + 1) & x.mask
		}
		x.slots[j] = indexSlot{lo: bl.hash.Lo, hi: uint32(bl.hash.Hi >> 32), v: int32(i)}
		x.n++
	}
}
