package cluster

import "servesim/internal/des/kvcache"

// lru is a router-side prefix index of one instance: the block hashes of
// requests routed there, most recently routed first, at most cap of them
// (docs/simulator.md §10, prefix-affinity). It approximates the instance's real cache
// without reading it.
//
// Routing touches it for every block of every routed request, so it is
// built for few cache misses (16 instances' indexes do not fit in a core's
// cache):
//
//   - Nodes (hash, recency links) live in one slice; a full index reuses
//     its least recent node for the new hash, so nodes are recycled in
//     order and the tail is read sequentially.
//   - Hashes are found through an open-addressing table of 4-byte slots
//     (linear probing on the hash's low word), each holding the node
//     number and a 16-bit tag from the hash's high word: a probe that
//     misses rarely reads a node.
//   - Evicting a node leaves its slot behind (stale: the node no longer
//     holds that hash, which a lookup checks against the node). Slots are
//     never deleted; the table is rebuilt from the nodes when live and
//     stale slots exceed 3/4 of it. An eviction thus costs no probe, and
//     a new hash takes the empty slot that ended its lookup.
//   - apply loads the home slots of all its hashes before touching any,
//     so their misses overlap.
//   - Records are applied only when the index is read, and a record that
//     newer ones are sure to evict entirely is dropped unapplied
//     (pending.go): with prompts that share no prefix, most never are.
//   - Hashes recorded as a request's first block are counted in a
//     firstFilter shared by all instances' indexes (see there).
type lru struct {
	cap        int
	slots      []uint32 // tag<<16 | node+1; 0 = empty
	mask       uint64
	used       int // occupied slots, live or stale
	limit      int // rebuild when used exceeds it
	nodes      []lruNode
	head, tail int32 // head: most recent; -1 when empty
	first      *firstFilter
	sink       uint32 // keeps apply's early loads alive
	pending           // records not yet applied (pending.go)
}

type lruNode struct {
	hash       kvcache.Hash
	prev, next int32
	first      bool // counted in the first-block filter
}

// maxLRU is the largest capacity: node numbers + 1 fit 16 bits.
const maxLRU = 1<<16 - 2

// Compile-time check that the router's index fits.
const _ uint = maxLRU - PrefixIndexBlocks

// newLRU returns an empty index of capacity min(capacity, maxLRU) ≥ 1. first,
// if not nil, counts the first blocks it holds.
func newLRU(capacity int, first *firstFilter) *lru {
	capacity = min(max(capacity, 1), maxLRU)
	size := 16
	for size < 2*capacity {
		size *= 2
	}
	return &lru{cap: capacity, slots: make([]uint32, size), mask: uint64(size - 1), limit: size * 3 / 4,
		head: -1, tail: -1, first: first}
}

func slotTag(h kvcache.Hash) uint32 { return uint32(h.Hi>>48) << 16 }

// find returns the node holding h, or -1.
func (l *lru) find(h kvcache.Hash) int32 {
	n, _ := l.probe(h)
	return n
}

// probe returns the node holding h, or -1 and the empty slot that ended
// the search (where h's slot goes).
func (l *lru) probe(h kvcache.Hash) (int32, uint64) {
	tag := slotTag(h)
	for i := h.Lo & l.mask; ; i = (i + 1) & l.mask {
		s := l.slots[i]
		if s == 0 {
			return -1, i
		}
		if s&0xffff0000 == tag {
			if n := int32(s&0xffff) - 1; l.nodes[n].hash == h {
				return n, i
			}
		}
	}
}

// insert adds a slot for node, whose hash has none that is live.
func (l *lru) insert(node int32) {
	h := l.nodes[node].hash
	i := h.Lo & l.mask
	for l.slots[i] != 0 {
		i = (i + 1) & l.mask
	}
	l.slots[i] = slotTag(h) | uint32(node+1)
	l.used++
}

// rebuild drops the stale slots.
func (l *lru) rebuild() {
	clear(l.slots)
	l.used = 0
	for n := range l.nodes {
		l.insert(int32(n))
	}
}

// match is the length of the leading run of hs found in the index.
func (l *lru) match(hs []kvcache.Hash) int {
	l.flush()
	k := 0
	for k < len(hs) && l.find(hs[k]) >= 0 {
		k++
	}
	return k
}

// apply makes every hash of hs most recent, the first block last so that
// it is evicted last: a prefix outlives its tail, as in the real cache.
// hs[0] is a request's first block, counted in the first-block filter
// when count is set (not for a stand-in: see router.prepare).
func (l *lru) apply(hs []kvcache.Hash, count bool) {
	// Load every home slot first: the loads are independent, so their
	// cache misses overlap instead of stalling each probe in turn.
	var s uint32
	for _, h := range hs {
		s |= l.slots[h.Lo&l.mask]
	}
	l.sink = s
	for k := len(hs) - 1; k >= 0; k-- {
		l.touch(hs[k], k == 0 && count)
	}
}

// touch makes h most recent, adding it if absent (evicting the least
// recent hash when full). first marks a request's first block.
func (l *lru) touch(h kvcache.Hash, first bool) {
	i, slot := l.probe(h)
	switch {
	case i >= 0:
		if i != l.head {
			l.unlink(i)
			l.pushFront(i)
		}
	case len(l.nodes) < l.cap:
		i = int32(len(l.nodes))
		l.nodes = append(l.nodes, lruNode{hash: h, prev: -1, next: -1})
		l.add(i, slot)
	default:
		i = l.tail
		l.unlink(i)
		nd := &l.nodes[i]
		if nd.first {
			l.first.add(nd.hash, -1)
			nd.first = false
		}
		nd.hash = h
		l.add(i, slot)
	}
	if first && !l.nodes[i].first && l.first != nil {
		l.nodes[i].first = true
		l.first.add(h, 1)
	}
}

// add gives node i, holding a hash new to the index, the empty slot that
// ended the hash's probe, and makes it most recent.
func (l *lru) add(i int32, slot uint64) {
	if l.used >= l.limit {
		l.rebuild() // i included
	} else {
		l.slots[slot] = slotTag(l.nodes[i].hash) | uint32(i+1)
		l.used++
	}
	l.pushFront(i)
}

func (l *lru) unlink(i int32) {
	nd := &l.nodes[i]
	p, n := nd.prev, nd.next
	if p >= 0 {
		l.nodes[p].next = n
	} else {
		l.head = n
	}
	if n >= 0 {
		l.nodes[n].prev = p
	} else {
		l.tail = p
	}
	nd.prev, nd.next = -1, -1
}

func (l *lru) pushFront(i int32) {
	nd := &l.nodes[i]
	nd.prev, nd.next = -1, l.head
	if l.head >= 0 {
		l.nodes[l.head].prev = i
	} else {
		l.tail = i
	}
	l.head = i
}

// firstFilter counts the first blocks (block 0 of a request) held by the
// router-side indexes of all instances, and those of their pending
// records. A hash it does not hold is held by no index, so every
// prefix-affinity match is 0 without a probe per instance (the usual case
// when prompts share no prefix). It is exact: a false "may hold" would
// make the router apply every candidate's pending records for nothing.
// Block hashes are chained from a zero parent, so a request's first block
// never appears at another position of a prompt (short of a 128-bit
// collision): flagging hashes recorded as first blocks covers every index
// entry a first block can match.
//
// It counts by the low 64 bits of the hash (a Go map is several times
// faster on an integer key than on a 16-byte one): two first blocks that
// share them would only make it answer "may hold" for both, which costs
// time, never a decision.
type firstFilter struct {
	count map[uint64]int32
}

func newFirstFilter() *firstFilter {
	return &firstFilter{count: map[uint64]int32{}}
}

func (f *firstFilter) add(h kvcache.Hash, d int32) {
	if n := f.count[h.Lo] + d; n != 0 {
		f.count[h.Lo] = n
	} else {
		delete(f.count, h.Lo)
	}
}

// mayHold reports whether some index, or a pending record, holds h as a
// first block.
func (f *firstFilter) mayHold(h kvcache.Hash) bool { return f.count[h.Lo] != 0 }
