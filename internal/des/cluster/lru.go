package cluster

import "servesim/internal/des/kvcache"

// lru is a router-side prefix index of one instance: the block hashes of
// requests routed there, most recently routed first, at most cap of them
// (spec §10, prefix-affinity). It approximates the instance's real cache
// without reading it. Hashes are found through an open-addressing table
// (linear probing on the hash's low word, backward-shift deletion, load ≤
// 1/2), which costs a fraction of a Go map with 16-byte keys.
type lru struct {
	cap        int
	slots      []int32 // node + 1; 0 = empty
	mask       uint64
	n          int
	hash       []kvcache.Hash
	prev, next []int32
	head, tail int32 // head: most recent; -1 when empty
}

func newLRU(capacity int) *lru {
	size := 16
	for size < 2*capacity {
		size *= 2
	}
	return &lru{cap: capacity, slots: make([]int32, size), mask: uint64(size - 1), head: -1, tail: -1}
}

// find returns the node holding h, or -1.
func (l *lru) find(h kvcache.Hash) int32 {
	for i := h.Lo & l.mask; ; i = (i + 1) & l.mask {
		s := l.slots[i]
		if s == 0 {
			return -1
		}
		if l.hash[s-1] == h {
			return s - 1
		}
	}
}

func (l *lru) insert(node int32) {
	i := l.hash[node].Lo & l.mask
	for l.slots[i] != 0 {
		i = (i + 1) & l.mask
	}
	l.slots[i] = node + 1
	l.n++
}

// remove deletes node's hash from the table, shifting later entries of its
// probe run back so that no tombstone is needed.
func (l *lru) remove(node int32) {
	i := l.hash[node].Lo & l.mask
	for l.slots[i] != node+1 {
		i = (i + 1) & l.mask
	}
	l.slots[i] = 0
	l.n--
	for j := (i + 1) & l.mask; l.slots[j] != 0; j = (j + 1) & l.mask {
		home := l.hash[l.slots[j]-1].Lo & l.mask
		// The entry at j may move to the hole at i unless its home lies
		// cyclically in (i, j].
		if (j-home)&l.mask >= (j-i)&l.mask {
			l.slots[i], l.slots[j] = l.slots[j], 0
			i = j
		}
	}
}

// match is the length of the leading run of hs found in the index.
func (l *lru) match(hs []kvcache.Hash) int {
	k := 0
	for k < len(hs) && l.find(hs[k]) >= 0 {
		k++
	}
	return k
}

// record makes every hash of hs most recent, the first block last so that
// it is evicted last: a prefix outlives its tail, as in the real cache.
func (l *lru) record(hs []kvcache.Hash) {
	for k := len(hs) - 1; k >= 0; k-- {
		l.touch(hs[k])
	}
}

func (l *lru) touch(h kvcache.Hash) {
	if i := l.find(h); i >= 0 {
		l.unlink(i)
		l.pushFront(i)
		return
	}
	var i int32
	if len(l.hash) < l.cap {
		i = int32(len(l.hash))
		l.hash = append(l.hash, h)
		l.prev = append(l.prev, -1)
		l.next = append(l.next, -1)
	} else {
		i = l.tail
		l.unlink(i)
		l.remove(i)
		l.hash[i] = h
	}
	l.insert(i)
	l.pushFront(i)
}

func (l *lru) unlink(i int32) {
	p, n := l.prev[i], l.next[i]
	if p >= 0 {
		l.next[p] = n
	} else {
		l.head = n
	}
	if n >= 0 {
		l.prev[n] = p
	} else {
		l.tail = p
	}
	l.prev[i], l.next[i] = -1, -1
}

func (l *lru) pushFront(i int32) {
	l.prev[i] = -1
	l.next[i] = l.head
	if l.head >= 0 {
		l.prev[l.head] = i
	} else {
		l.tail = i
	}
	l.head = i
}

// len is the number of hashes held.
func (l *lru) len() int { return l.n }
