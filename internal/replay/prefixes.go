package replay

import (
	"errors"
	"io"

	"servesim/internal/tracev2"
)

// Prefixes no other row shares. A row's prompt of hash ids (Mooncake's)
// shares its KV blocks with another row's only as far as both begin with
// the same hash ids: a block's hash chains through every block before it.
// From the first hash id whose prefix (the row's hash ids up to it) no
// other row of the whole trace has, the row's blocks can be hit by that
// row alone, after a preemption, exactly as its own fresh tokens can: the
// rest of its prompt is then declared private (instance.Request.Private),
// and the KV cache neither hashes nor indexes those blocks nor keeps shared
// state for them. In Mooncake's conversation trace that is half the
// prompts' blocks, and most of the replay's time was spent on them.
//
// Whether another row has a prefix takes the whole trace, read once before
// the replay (Trace.scan, or CountPrefixes for a streamed trace): each
// prefix's key, a 64-bit hash of its hash ids, is counted up to two. Keys
// that collide are counted together, which can only make a prefix look
// shared that is not — a block hashed that need not be, never a hit lost:
// the results are those of a replay that declares nothing
// (TestSharedPrefixesChangeNothing). The table is bounded (maxPrefixSlots);
// a trace with more distinct prefixes than fit declares nothing.
type prefixCounts struct {
	slots []uint64 // key | twice; 0 = empty
	mask  uint64
	n     int
	limit int  // maxPrefixSlots (tests lower it)
	over  bool // more distinct prefixes than the table holds: nothing is private
	// print is a fingerprint of the rows counted (their hash ids, in
	// order), to check that the replay reads the rows that were counted.
	print uint64
	rows  int
}

const (
	prefixTwice    = 1
	minPrefixSlots = 1 << 12
	maxPrefixSlots = 1 << 22 // 32 MB; filled to half at most: 2M distinct prefixes
)

func newPrefixCounts() *prefixCounts {
	return &prefixCounts{slots: make([]uint64, minPrefixSlots), mask: minPrefixSlots - 1, limit: maxPrefixSlots}
}

// prefixKey extends the key of a prefix by hash id h. Bit 0 is left clear
// (the twice flag's), and a key is never 0.
func prefixKey(k uint64, h int64) uint64 {
	k = (k ^ uint64(h)) * 0x9E3779B97F4A7C15
	k ^= k >> 29
	k *= 0xBF58476D1CE4E5B9
	k ^= k >> 32
	return k&^prefixTwice | 2
}

// add counts the prefixes of a row's hash ids.
func (p *prefixCounts) add(ids []int64) {
	p.rows++
	p.print = fingerprint(p.print, ids)
	if p.over {
		return
	}
	var k uint64
	for _, h := range ids {
		k = prefixKey(k, h)
		p.insert(k)
		if p.over {
			return
		}
	}
}

// fingerprint folds a row's hash ids into a fingerprint of the rows.
func fingerprint(f uint64, ids []int64) uint64 {
	f = (f ^ uint64(len(ids))) * 0xff51afd7ed558ccd
	for _, h := range ids {
		f = (f ^ uint64(h)) * 0xc4ceb9fe1a85ec53
	}
	return f
}

// insert counts key k once more.
func (p *prefixCounts) insert(k uint64) {
	for i := k >> 1 & p.mask; ; i = (i + 1) & p.mask {
		switch s := p.slots[i]; {
		case s == 0:
			p.slots[i] = k
			if p.n++; 2*p.n > len(p.slots) {
				p.grow()
			}
			return
		case s&^prefixTwice == k:
			p.slots[i] = s | prefixTwice
			return
		}
	}
}

// grow doubles the table, or gives up past maxPrefixSlots.
func (p *prefixCounts) grow() {
	if len(p.slots) >= p.limit {
		p.over, p.slots = true, nil
		return
	}
	old := p.slots
	p.slots = make([]uint64, 2*len(old))
	p.mask = uint64(len(p.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := s >> 1 & p.mask
		for p.slots[i] != 0 {
			i = (i + 1) & p.mask
		}
		p.slots[i] = s
	}
}

// once reports whether the prefix of key k was counted once only.
func (p *prefixCounts) once(k uint64) bool {
	for i := k >> 1 & p.mask; ; i = (i + 1) & p.mask {
		switch s := p.slots[i]; {
		case s == 0:
			return false // not counted: not a row of the counted trace
		case s&^prefixTwice == k:
			return s&prefixTwice == 0
		}
	}
}

// privateFrom is the place of the first of a row's hash ids whose prefix
// no other row has, among those that begin within its first n tokens
// (hashTokens each), or -1.
func (p *prefixCounts) privateFrom(ids []int64, n, hashTokens int) int {
	if p == nil || p.over {
		return -1
	}
	var k uint64
	for i, h := range ids {
		if i*hashTokens >= n {
			break
		}
		k = prefixKey(k, h)
		if p.once(k) {
			return i
		}
	}
	return -1
}

// CountPrefixes reads the rows of a streamed trace (StreamTrace) before
// the replay, from rd (another reading of the same rows), and counts the
// prefixes of their hash ids, so that the rest of a row's prompt after a
// prefix no other row has is declared private. rd is read to its end and
// closed. On a reading error nothing is declared private (the replay
// meets the error itself). The replay checks that it reads the rows
// counted: Finish fails with ErrRowsChanged if they differ.
func (t *Trace) CountPrefixes(rd RowReader) {
	defer rd.Close()
	p := newPrefixCounts()
	var rec tracev2.Record
	for {
		err := rd.Read(&rec)
		if err != nil {
			if errors.Is(err, io.EOF) {
				t.prefixes = p
			}
			return
		}
		p.add(rec.HashIDs)
	}
}

// ErrRowsChanged says a streamed trace's rows were not those CountPrefixes
// counted: the file changed between the two readings.
var ErrRowsChanged = errors.New("replay: the trace changed while it was replayed (its rows differ from those read before)")

// sharedPrefixes implements aheadSource.
func (t *Trace) sharedPrefixes() *prefixCounts { return t.prefixes }
