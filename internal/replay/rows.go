package replay

import (
	"io"

	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
)

// Rows is a trace's rows in file order, on the simulation's time origin
// (epoch times already normalised), that can be read more than once:
// NewTrace reads them once to learn their order, and the replay reads them
// again as it injects them, so the trace never has to be held in memory.
// The trace input layer (internal/tracev2/input) provides them: a file, or
// a spool of stdin or of an import.
type Rows = input.Rows

// RowReader is one pass over Rows. *tracev2.Reader is one.
type RowReader = input.RowReader

// RecordRows serves rows held in memory (tests, small inputs).
type RecordRows []tracev2.Record

// Open implements Rows.
func (r RecordRows) Open() (RowReader, error) { return &recordReader{recs: r}, nil }

type recordReader struct {
	recs []tracev2.Record
	i    int
}

func (r *recordReader) Read(rec *tracev2.Record) error {
	if r.i >= len(r.recs) {
		return io.EOF
	}
	*rec = r.recs[r.i]
	r.i++
	return nil
}

func (r *recordReader) Close() error { return nil }

// bitset is a set of small non-negative integers.
type bitset []uint64

func newBitset(n int) bitset      { return make(bitset, (n+63)/64) }
func (b bitset) set(i int32)      { b[i>>6] |= 1 << (i & 63) }
func (b bitset) has(i int32) bool { return b != nil && b[i>>6]&(1<<(i&63)) != 0 }
