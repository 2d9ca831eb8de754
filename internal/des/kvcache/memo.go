package kvcache

import "fmt"

// The match memo. A request that cannot be admitted waits at the head of
// the queue and is matched again at every step (Match, then Admit, which
// fails for lack of blocks): with prompts of hundreds of cached blocks
// (Mooncake's conversations) those lookups were most of a replay's time,
// although between two steps few of the blocks change. So the cache keeps
// the match of the sequence matched last up to date as it changes: memo
// holds the blocks found for its leading full blocks, and
//
//   - an eviction (popFree) of one of them cuts the memo there (the hash is
//     no longer findable: the evicted copy was the indexed one);
//   - a newer copy taking a hash over in the index (register) takes the
//     older one's place in the memo;
//   - their reference counts are followed, to count those on the free list
//     (Admit's onFree).
//
// A later Match of the same sequence then looks up only the block after the
// memo's last (it may have been cached since), and Admit reads the memo
// instead of looking the blocks up again: both cost what changed. A memo
// block carries block.inMemo and its place in memoPos. The results are
// those of looking every block up (TestMemoMatchesLookups, and Check
// verifies the memo).
type matchMemo struct {
	seq   *Seq
	id    uint64  // Seq.memo of seq while this is its memo
	found []int32 // found[k]: the indexed block holding seq's hash k
	free  int     // blocks of found with reference count 0
}

// memoOf reports whether the memo is s's.
func (c *Cache) memoOf(s *Seq) bool {
	return c.memo.seq == s && s.memo != 0 && s.memo == c.memo.id
}

// memoFor makes the memo s's, starting empty unless it already is.
func (c *Cache) memoFor(s *Seq) {
	if c.memoOf(s) {
		return
	}
	c.dropMemo()
	c.memoSerial++
	c.memo.seq, c.memo.id, s.memo = s, c.memoSerial, c.memoSerial
}

// dropMemo forgets the memo.
func (c *Cache) dropMemo() {
	c.memoCut(0)
	c.memo.seq = nil
}

// memoExtend looks up the memo sequence's blocks after the memo's last,
// below limit, until one is not cached.
//
// A sequence matched again after a preemption mostly finds its hashes in
// the blocks it held (Seq.held): a block still indexed with the hash is
// its indexed holder, found without the index's probe.
func (c *Cache) memoExtend(limit int) {
	m := &c.memo
	s := m.seq
	held := s.blocks[:s.held]
	for len(m.found) < limit {
		k := len(m.found)
		h := s.BlockHash(k, c.b)
		var i int32
		ok := false
		if k < len(held) {
			if g := held[k]; int(g) < c.t && c.blocks[g].indexed && c.hashes[g] == h {
				i, ok = g, true
			}
		}
		if !ok {
			if i, ok = c.lookup(h); !ok {
				return
			}
		}
		bl := &c.blocks[i]
		bl.inMemo = true
		c.memoPos[i] = int32(len(m.found))
		if bl.ref == 0 {
			m.free++
		}
		m.found = append(m.found, i)
	}
}

// memoCut drops the memo's blocks from place k on.
func (c *Cache) memoCut(k int) {
	m := &c.memo
	for _, i := range m.found[k:] {
		bl := &c.blocks[i]
		bl.inMemo = false
		if bl.ref == 0 {
			m.free--
		}
	}
	m.found = m.found[:k]
}

// memoEvict is told that memo block i is being evicted.
func (c *Cache) memoEvict(i int32) { c.memoCut(int(c.memoPos[i])) }

// memoTakeOver is told that block to takes memo block from's place as the
// indexed holder of its hash.
func (c *Cache) memoTakeOver(from, to int32) {
	m := &c.memo
	k := c.memoPos[from]
	fb, tb := &c.blocks[from], &c.blocks[to]
	fb.inMemo, tb.inMemo = false, true
	if fb.ref == 0 {
		m.free--
	}
	if tb.ref == 0 {
		m.free++
	}
	m.found[k] = to
	c.memoPos[to] = k
}

// checkMemo verifies the memo: its blocks are the indexed holders of its
// sequence's hashes, flagged, and free ones are counted.
func (c *Cache) checkMemo() error {
	m := &c.memo
	flagged := 0
	for i := range c.blocks {
		if c.blocks[i].inMemo {
			flagged++
		}
	}
	if flagged != len(m.found) {
		return fmt.Errorf("kvcache: %d blocks flagged in the match memo, which holds %d", flagged, len(m.found))
	}
	free := 0
	for k, i := range m.found {
		bl := &c.blocks[i]
		if !bl.inMemo || c.memoPos[i] != int32(k) || !bl.hashed || !bl.indexed {
			return fmt.Errorf("kvcache: match memo place %d: block %d is not an indexed memo block there", k, i)
		}
		if m.seq != nil && m.seq.memo == m.id && (k >= len(m.seq.hashes) || c.hashes[i] != m.seq.hashes[k]) {
			return fmt.Errorf("kvcache: match memo place %d: block %d holds another hash", k, i)
		}
		if bl.ref == 0 {
			free++
		}
	}
	if free != m.free {
		return fmt.Errorf("kvcache: match memo counts %d free blocks, holds %d", m.free, free)
	}
	return nil
}
