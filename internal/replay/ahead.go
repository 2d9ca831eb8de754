package replay

import (
	"errors"
	"io"

	"servesim/internal/des/kvcache"
	"servesim/internal/tracev2"
)

// Reading ahead. A user times the whole command on a machine with more
// than one core, and a trace's rows are independent of the simulation's
// state until they are injected: decoding them, and naming the blocks of
// their hash-id prefixes (chains), can run on another goroutine, in file
// order, while the simulation consumes what is ready. The results are
// those of computing everything in the simulation's goroutine: regions
// are a pure function of (seed, hash ids, block size), and the simulation
// still takes the rows one by one in the same order.

// aheadRow is a row read ahead and what was computed for it.
type aheadRow struct {
	rec tracev2.Record
	pre hashedPrefix
}

// hashedPrefix is what chains.known gives a row's hash-id prefix: its
// regions and the number of blocks they cover. done says it was computed
// (else tokens.prompt computes it if it needs it).
type hashedPrefix struct {
	regions []kvcache.Region
	blocks  int
	private int // prefixCounts.privateFrom of its hash ids
	done    bool
}

// hasher computes the hashed prefixes of rows ahead (chains holds no
// state: the simulation's goroutine uses the same).
type hasher struct {
	chains     *chains
	hashTokens int
	// skip says a row's prompt will never be read (driver.unread): its
	// prefix is not hashed at all.
	skip func(*tracev2.Record) bool
	// shared counts the trace's hash-id prefixes (prefixes.go), or is nil.
	shared *prefixCounts
	// sessions: rows of accumulating sessions after their first round
	// usually begin with their predecessor's context instead of their
	// hash ids; they are left to tokens.prompt.
	sessions bool
}

// hash fills r.pre when the row's prompt begins with hash-id blocks.
func (h *hasher) hash(r *aheadRow) {
	rec := &r.rec
	if h == nil || len(rec.HashIDs) == 0 || (h.sessions && rec.SessionID != "" && rec.RoundIndex > 0) || h.skip(rec) {
		return
	}
	n := rec.ResendPromptTokens()
	r.pre.regions, r.pre.blocks = h.chains.known(nil, rec.HashIDs, n, h.hashTokens)
	r.pre.private = h.shared.privateFrom(rec.HashIDs, n, h.hashTokens)
	r.pre.done = true
}

// Batches grow from aheadFirst rows (the simulation starts soon) to
// aheadBatch; aheadDepth batches wait at most, so the reader runs at most
// about a thousand rows ahead.
const (
	aheadFirst = 16
	aheadBatch = 256
	aheadDepth = 4
)

// ahead reads up to n rows of rd on its own goroutine.
type ahead struct {
	rows  chan []*aheadRow
	stop  chan struct{}
	done  chan struct{}
	rd    RowReader
	err   error // the reading's end: io.EOF after n rows, or its error; set before rows is closed
	batch []*aheadRow
	pos   int
}

// errStopped ends a reading the consumer stopped.
var errStopped = errors.New("replay: reading ahead stopped")

// startAhead starts reading n rows of rd ahead, hashing them with h (nil:
// no hashing). The caller must call close.
func startAhead(rd RowReader, n int, h *hasher) *ahead {
	a := &ahead{rows: make(chan []*aheadRow, aheadDepth), stop: make(chan struct{}), done: make(chan struct{}), rd: rd}
	go a.run(n, h)
	return a
}

func (a *ahead) run(n int, h *hasher) {
	defer close(a.done)
	defer close(a.rows)
	size := aheadFirst
	for read := 0; ; {
		batch := make([]*aheadRow, 0, size)
		for len(batch) < size && a.err == nil {
			if read == n {
				a.err = io.EOF
				break
			}
			r := new(aheadRow)
			if err := a.rd.Read(&r.rec); err != nil {
				a.err = err
				break
			}
			read++
			h.hash(r)
			batch = append(batch, r)
		}
		if len(batch) > 0 {
			select {
			case a.rows <- batch:
			case <-a.stop:
				a.err = errStopped
				return
			}
		}
		if a.err != nil {
			return
		}
		size = min(2*size, aheadBatch)
	}
}

// next returns the next row, or the reading's end (io.EOF after the n
// rows, or its error).
func (a *ahead) next() (*aheadRow, error) {
	if a.pos == len(a.batch) {
		b, ok := <-a.rows
		if !ok {
			return nil, a.err
		}
		a.batch, a.pos = b, 0
	}
	r := a.batch[a.pos]
	a.batch[a.pos] = nil
	a.pos++
	return r, nil
}

// close stops the reading, waits for its goroutine and closes the reader.
func (a *ahead) close() error {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	<-a.done
	return a.rd.Close()
}
