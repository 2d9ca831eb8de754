package replay

import (
	"context"
	"errors"
	"io"

	"servesim/internal/deploy"
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
// prefix's key, a hash of its hash ids, is counted up to two by a 30-bit
// tag (with 4M distinct prefixes, the table's bound, a unique one is taken
// for shared 0.4% of the time; Mooncake's conversation trace has 288k).
// Tags that collide are counted together, which can only make a prefix look
// shared that is not — a block hashed that need not be, never a hit lost:
// the results are those of a replay that declares nothing
// (TestHashPromptsChangeNothing, TestStreamedPrefixesChangeNothing). The table is bounded (maxPrefixSlots);
// a trace with more distinct prefixes than fit declares nothing.
type prefixCounts struct {
	slots []uint32 // a key's tag | twice; 0 = empty
	shift uint     // a tag's home slot is its top bits after a multiply
	n     int
	limit int  // maxPrefixSlots (tests lower it)
	over  bool // more distinct prefixes than the table holds: nothing is private
	// fp is a fingerprint of the rows counted (their hash ids, in order),
	// to check that the replay reads the rows that were counted.
	fp   uint64
	rows int
}

const (
	prefixTwice    = 1
	minPrefixSlots = 1 << 12
	maxPrefixSlots = 1 << 23 // 32 MB; filled to half at most: 4M distinct prefixes
)

// newPrefixCounts returns an empty count sized for about hint prefixes.
func newPrefixCounts(hint int) *prefixCounts {
	size, shift := minPrefixSlots, uint(32-12)
	for size < 2*hint && size < maxPrefixSlots {
		size, shift = 2*size, shift-1
	}
	return &prefixCounts{slots: make([]uint32, size), shift: shift, limit: maxPrefixSlots}
}

// prefixKey extends the key of a prefix by hash id h.
func prefixKey(k uint64, h int64) uint64 {
	k = (k ^ uint64(h)) * 0x9E3779B97F4A7C15
	k ^= k >> 29
	k *= 0xBF58476D1CE4E5B9
	return k ^ k>>32
}

// tagOf is the 32 bits of a key the table keeps: never 0, bit 0 clear
// (the twice flag's), so 30 bits tell keys apart; keys with the same tag
// are counted together.
func tagOf(k uint64) uint32 { return uint32(k>>32)&^prefixTwice | 2 }

// home is the first slot a tag is looked for in.
func (p *prefixCounts) home(tag uint32) uint32 { return tag * 0x9E3779B1 >> p.shift }

// add counts the prefixes of a row's hash ids.
func (p *prefixCounts) add(ids []int64) {
	p.rows++
	p.fp = fingerprint(p.fp, ids)
	if p.over {
		return
	}
	var k uint64
	for _, h := range ids {
		k = prefixKey(k, h)
		p.insert(tagOf(k))
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

// insert counts a tag once more.
func (p *prefixCounts) insert(tag uint32) {
	mask := uint32(len(p.slots) - 1)
	for i := p.home(tag); ; i = (i + 1) & mask {
		switch s := p.slots[i]; {
		case s == 0:
			p.slots[i] = tag
			if p.n++; 2*p.n > len(p.slots) {
				p.grow()
			}
			return
		case s&^prefixTwice == tag:
			p.slots[i] = s | prefixTwice
			return
		}
	}
}

// grow doubles the table, or gives up past the limit.
func (p *prefixCounts) grow() {
	if len(p.slots) >= p.limit {
		p.over, p.slots = true, nil
		return
	}
	old := p.slots
	p.slots = make([]uint32, 2*len(old))
	p.shift--
	mask := uint32(len(p.slots) - 1)
	for _, s := range old {
		if s == 0 {
			continue
		}
		i := p.home(s &^ prefixTwice)
		for p.slots[i] != 0 {
			i = (i + 1) & mask
		}
		p.slots[i] = s
	}
}

// once reports whether the prefix of key k was counted once only.
func (p *prefixCounts) once(k uint64) bool {
	tag := tagOf(k)
	mask := uint32(len(p.slots) - 1)
	for i := p.home(tag); ; i = (i + 1) & mask {
		switch s := p.slots[i]; {
		case s == 0:
			return false // not counted: not a row of the counted trace
		case s&^prefixTwice == tag:
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
// prefix no other row has is declared private. rd is read to its end, on
// a goroutine of its own while this one counts, and closed. On a reading
// error nothing is declared private (the replay meets the error itself),
// nor when ctx is cancelled before the end.
// The replay checks that it reads the rows counted: Next and Finish fail
// with ErrRowsChanged if they differ.
//
// hint, the number of hash ids the rows are expected to hold, sizes the
// count's table (it grows if need be).
func (t *Trace) CountPrefixes(ctx context.Context, rd RowReader, hint int) {
	type batch struct {
		ids  []int64 // the rows' hash ids, one after another
		ends []int32 // where each row's hash ids end
		err  error   // the reading's end, in the last batch
	}
	const rows = 256
	batches := make(chan batch, 4)
	go func() {
		defer close(batches)
		defer rd.Close()
		var rec tracev2.Record
		b := batch{ends: make([]int32, 0, rows)}
		for {
			if b.err = rd.Read(&rec); b.err == nil && len(b.ends) == 0 {
				b.err = ctx.Err() // cancelled: nothing is declared
			}
			if b.err != nil {
				batches <- b
				return
			}
			b.ids = append(b.ids, rec.HashIDs...) // rd may reuse rec's list
			b.ends = append(b.ends, int32(len(b.ids)))
			if len(b.ends) == rows {
				batches <- b
				b = batch{ids: make([]int64, 0, len(b.ids)), ends: make([]int32, 0, rows)}
			}
		}
	}()
	p := newPrefixCounts(hint)
	done := false
	for b := range batches {
		from := int32(0)
		for _, end := range b.ends {
			p.add(b.ids[from:end])
			from = end
		}
		done = errors.Is(b.err, io.EOF)
	}
	if done {
		t.prefixes = p
	}
}

// ErrRowsChanged says a streamed trace's rows were not those CountPrefixes
// counted: the file changed between the two readings.
var ErrRowsChanged = errors.New("replay: the trace changed while it was replayed (its rows differ from those read before)")

// sharedPrefixes implements aheadSource.
func (t *Trace) sharedPrefixes() *prefixCounts { return t.prefixes }

// DeclaresPrivate reports whether a replay on dep declares private what no
// other request can hit (prefixes.go): every KV cache of dep honours the
// declaration (a CPU tier hashes every block).
func DeclaresPrivate(dep *deploy.Resolved) bool { return honoursPrivacy(dep) }
