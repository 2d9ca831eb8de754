package cluster

import "servesim/internal/des/kvcache"

// pending holds an lru's records not yet applied, oldest first. Applying
// them in order before every read (match, len) gives exactly the index
// that applying each at once would, so a record can wait; and one that
// newer records are sure to push out entirely need never be applied.
//
// Why a record can be dropped: block hashes are chained, so a hash
// determines the whole prefix before it, and a record touches its first
// block last. Within one index a prefix is therefore always at least as
// recent as any block after it (the index is prefix-closed), and two
// records with different first blocks share no hash at all. A record is
// disjoint when, as it is routed, the first-block filter shows its first
// block held by no index and by no pending record (their first blocks are
// counted too): then it shares no hash with anything recorded before it,
// and later records that share its hashes are not disjoint. Disjoint
// pending records are thus pairwise disjoint, and their block counts add
// up to a lower bound on the distinct hashes they hold. Once the disjoint
// records newer than the oldest pending one hold at least cap blocks,
// applying everything would leave only hashes of those newer records, in
// an order they alone decide: the oldest record and the applied index are
// dropped. When records are not disjoint (shared prefixes), the oldest
// is applied once more than 2·cap blocks wait, which bounds memory.
type pending struct {
	pend    []kvcache.Hash // hash lists of the pending records, from pendAt
	scratch []kvcache.Hash // a record's hashes with its stand-ins, to apply
	pendAt  int
	recs    []pendRec // from recAt
	recAt   int
	pendN   int // pending blocks
	dsum    int // blocks of disjoint pending records
}

// pendRec is a pending record of n blocks: the first len hashes are in
// pend, the rest are the stand-ins of a request's private blocks (standIn
// with stamp), made only if the record is applied.
type pendRec struct {
	n, len   int
	stamp    uint64
	disjoint bool
}

// record makes a request's n block hashes (first block first) the most
// recent, as apply does, when the index is next read: hs, then, when n >
// len(hs), the stand-ins of its private blocks len(hs)…n−1 (standIn with
// stamp). disjoint says the first-block filter held the first block
// nowhere as the request was routed.
func (l *lru) record(hs []kvcache.Hash, n int, stamp uint64, disjoint bool) {
	if n == 0 {
		return
	}
	r := pendRec{n: n, len: len(hs), stamp: stamp, disjoint: disjoint}
	if l.first != nil && r.len > 0 {
		l.first.add(hs[0], 1)
	}
	l.pend = append(l.pend, hs...)
	l.recs = append(l.recs, r)
	l.pendN += n
	if disjoint {
		l.dsum += n
	}
	l.trim()
}

// trim drops the oldest records newer disjoint ones supersede, and applies
// the oldest while more than 2·cap blocks wait.
func (l *lru) trim() {
	for l.recAt < len(l.recs) {
		newer := l.dsum
		if old := l.recs[l.recAt]; old.disjoint {
			newer -= old.n
		}
		switch {
		case newer >= l.cap:
			l.reset()
			l.popRecord(false)
		case l.pendN > 2*l.cap:
			l.popRecord(true)
		default:
			l.compactPending()
			return
		}
	}
	l.compactPending()
}

// flush applies every pending record, oldest first.
func (l *lru) flush() {
	for l.recAt < len(l.recs) {
		l.popRecord(true)
	}
	l.compactPending()
}

// popRecord removes the oldest pending record, applying it if apply.
func (l *lru) popRecord(apply bool) {
	r := l.recs[l.recAt]
	hs := l.pend[l.pendAt : l.pendAt+r.len]
	l.recAt++
	l.pendAt += r.len
	l.pendN -= r.n
	if r.disjoint {
		l.dsum -= r.n
	}
	if l.first != nil && r.len > 0 {
		l.first.add(hs[0], -1) // apply counts it again if it flags it
	}
	if !apply {
		return
	}
	if r.len < r.n {
		l.scratch = withStandIns(l.scratch[:0], hs, r.n, r.stamp)
		hs = l.scratch
	}
	l.apply(hs, r.len > 0)
}

// compactPending moves the pending records to the front of their slices
// once the consumed part dominates.
func (l *lru) compactPending() {
	if l.recAt == len(l.recs) {
		l.pend, l.recs = l.pend[:0], l.recs[:0]
		l.pendAt, l.recAt = 0, 0
		return
	}
	if l.pendAt > 4096 && l.pendAt > len(l.pend)/2 {
		n := copy(l.pend, l.pend[l.pendAt:])
		l.pend, l.pendAt = l.pend[:n], 0
	}
	if l.recAt > 256 && l.recAt > len(l.recs)/2 {
		n := copy(l.recs, l.recs[l.recAt:])
		l.recs, l.recAt = l.recs[:n], 0
	}
}

// reset empties the applied index (its hashes are all superseded).
func (l *lru) reset() {
	if len(l.nodes) == 0 {
		return
	}
	if l.first != nil {
		for _, nd := range l.nodes {
			if nd.first {
				l.first.add(nd.hash, -1)
			}
		}
	}
	l.nodes = l.nodes[:0]
	clear(l.slots)
	l.used = 0
	l.head, l.tail = -1, -1
}
