package cluster

import "servesim/internal/des/kvcache"

// lru is a router-side prefix index of one instance: the block hashes of
// requests routed there, most recently routed first, at most cap of them
// (spec §10, prefix-affinity). It approximates the instance's real cache
// without reading it.
type lru struct {
	cap        int
	idx        map[kvcache.Hash]int32
	hash       []kvcache.Hash
	prev, next []int32
	head, tail int32 // head: most recent; -1 when empty
}

func newLRU(capacity int) *lru {
	return &lru{cap: capacity, idx: make(map[kvcache.Hash]int32), head: -1, tail: -1}
}

// match is the length of the leading run of hs found in the index.
func (l *lru) match(hs []kvcache.Hash) int {
	k := 0
	for k < len(hs) {
		if _, ok := l.idx[hs[k]]; !ok {
			break
		}
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
	if i, ok := l.idx[h]; ok {
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
		delete(l.idx, l.hash[i])
		l.hash[i] = h
	}
	l.idx[h] = i
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
func (l *lru) len() int { return len(l.idx) }
