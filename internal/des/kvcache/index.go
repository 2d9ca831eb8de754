package kvcache

// hashIndex maps block hashes to block ids: open addressing with linear
// probing and backward-shift deletion (no tombstones, so probe lengths stay
// short under the constant insert/evict churn of a busy cache). Hashes are
// already uniformly mixed, so the low bits of Lo pick the home slot. The
// table holds at most one entry per block and is sized to twice the block
// count, so the load factor stays ≤ 0.5.
type hashIndex struct {
	slots []indexSlot
	mask  uint64
	n     int
}

type indexSlot struct {
	h Hash
	v int32 // block id; -1 = empty
}

func newHashIndex(blocks int) hashIndex {
	size := 16
	for size < 2*blocks {
		size *= 2
	}
	s := make([]indexSlot, size)
	for i := range s {
		s[i].v = -1
	}
	return hashIndex{slots: s, mask: uint64(size - 1)}
}

func (x *hashIndex) get(h Hash) (int32, bool) {
	for i := h.Lo & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.v < 0 {
			return -1, false
		}
		if s.h == h {
			return s.v, true
		}
	}
}

// put inserts h → v; h must be absent.
func (x *hashIndex) put(h Hash, v int32) {
	i := h.Lo & x.mask
	for x.slots[i].v >= 0 {
		i = (i + 1) & x.mask
	}
	x.slots[i] = indexSlot{h: h, v: v}
	x.n++
}

// del removes h if present.
func (x *hashIndex) del(h Hash) {
	i := h.Lo & x.mask
	for {
		s := &x.slots[i]
		if s.v < 0 {
			return
		}
		if s.h == h {
			break
		}
		i = (i + 1) & x.mask
	}
	x.shiftFrom(i)
}

func (x *hashIndex) len() int { return x.n }

// putIfAbsent inserts h → v unless h is present; it reports whether it did.
func (x *hashIndex) putIfAbsent(h Hash, v int32) bool {
	i := h.Lo & x.mask
	for {
		s := &x.slots[i]
		if s.v < 0 {
			*s = indexSlot{h: h, v: v}
			x.n++
			return true
		}
		if s.h == h {
			return false
		}
		i = (i + 1) & x.mask
	}
}

// delIf removes h if it maps to v.
func (x *hashIndex) delIf(h Hash, v int32) {
	i := h.Lo & x.mask
	for {
		s := &x.slots[i]
		if s.v < 0 {
			return
		}
		if s.h == h {
			if s.v != v {
				return
			}
			break
		}
		i = (i + 1) & x.mask
	}
	x.shiftFrom(i)
}

// shiftFrom empties slot i and closes the hole by backward shifting.
func (x *hashIndex) shiftFrom(i uint64) {
	j := i
	for {
		j = (j + 1) & x.mask
		if x.slots[j].v < 0 {
			break
		}
		home := x.slots[j].h.Lo & x.mask
		if (i <= j && i < home && home <= j) || (i > j && (i < home || home <= j)) {
			continue
		}
		x.slots[i] = x.slots[j]
		i = j
	}
	x.slots[i].v = -1
	x.n--
}
