package kvcache

// cpuTier is an LRU of block hashes with a fixed capacity (the mirror model
// of vLLM's offload connector: contents are copies, keyed by hash).
type cpuTier struct {
	cap        int
	nodes      []cpuNode
	pos        map[Hash]int32
	head, tail int32 // head = least recently touched
	freeNode   int32
}

type cpuNode struct {
	h          Hash
	prev, next int32
	at         int64 // when the copy was made
}

func newCPUTier(capacity int) *cpuTier {
	return &cpuTier{cap: capacity, pos: make(map[Hash]int32), head: -1, tail: -1, freeNode: -1}
}

func (t *cpuTier) has(h Hash) bool { _, ok := t.pos[h]; return ok }

// offloadedAt is the time h was copied to the tier, if it is there.
func (t *cpuTier) offloadedAt(h Hash) (int64, bool) {
	i, ok := t.pos[h]
	if !ok {
		return 0, false
	}
	return t.nodes[i].at, true
}

func (t *cpuTier) unlink(i int32) {
	n := &t.nodes[i]
	if n.prev >= 0 {
		t.nodes[n.prev].next = n.next
	} else {
		t.head = n.next
	}
	if n.next >= 0 {
		t.nodes[n.next].prev = n.prev
	} else {
		t.tail = n.prev
	}
}

func (t *cpuTier) append(i int32) {
	n := &t.nodes[i]
	n.prev, n.next = t.tail, -1
	if t.tail >= 0 {
		t.nodes[t.tail].next = i
	} else {
		t.head = i
	}
	t.tail = i
}

// touch makes h the most recent entry, inserting it copied at now (and
// evicting the least recent when over capacity) if absent.
func (t *cpuTier) touch(h Hash, now int64) (added, evicted bool) {
	if i, ok := t.pos[h]; ok {
		if i != t.tail {
			t.unlink(i)
			t.append(i)
		}
		return false, false
	}
	if len(t.pos) >= t.cap {
		v := t.head
		t.unlink(v)
		delete(t.pos, t.nodes[v].h)
		t.nodes[v].next = t.freeNode
		t.freeNode = v
		evicted = true
	}
	var i int32
	if t.freeNode >= 0 {
		i = t.freeNode
		t.freeNode = t.nodes[i].next
	} else {
		i = int32(len(t.nodes))
		t.nodes = append(t.nodes, cpuNode{})
	}
	t.nodes[i].h, t.nodes[i].at = h, now
	t.append(i)
	t.pos[h] = i
	return true, evicted
}
