package replay

import (
	"errors"
	"io"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
)

// A streamed trace is read once, as the simulation takes its rows, instead
// of once to sort them and again to replay them. That is only the same
// replay when the rows already come in injection order: an import, whose
// rows are numbered in file order, of a trace whose arrivals never go
// back (Azure's and Mooncake's, sorted by time). The Trace checks it row by
// row and fails with ErrNotInOrder at the first row that breaks it; the
// caller then replays the trace the usual way, and must hold back what the
// streamed replay wrote until the whole trace has been read (Finish).

// ErrNotInOrder says a streamed trace's rows are not in injection order:
// an injection time before the previous row's or before the time origin,
// or a request id not above the previous row's.
var ErrNotInOrder = errors.New("replay: the rows are not in injection order")

// StreamTrace prepares the replay of rd's rows in the order they come,
// read (and hashed, with Simulate) ahead on another goroutine. Options are
// those of NewTrace but for ClosedLoop, which needs the whole trace to
// index the sessions, and SetRate, which needs its first and last
// injection times. Until the rows run out, Len counts the rows taken so
// far and RequestIDs grows as rows are injected.
func StreamTrace(rd RowReader, opts TraceOptions) (*Trace, error) {
	switch {
	case opts.ClosedLoop:
		return nil, exitcode.Usagef("a closed-loop replay cannot stream its trace")
	case opts.ThinkTimeUs < 0:
		return nil, exitcode.Usagef("think time is negative")
	}
	t := &Trace{opts: opts, streamed: rd, buf: map[int32]*aheadRow{}}
	if opts.Ordinals {
		t.ordinals = map[int64]int32{}
	}
	return t, nil
}

// nextStreamed is Next of a streamed trace.
func (t *Trace) nextStreamed() (*tracev2.Record, error) {
	for t.err == nil {
		row, ok := t.takeStreamed()
		if !ok {
			break
		}
		if t.opts.SkipFailed && row.rec.Status != "ok" {
			continue
		}
		rec := &row.rec
		place := int32(t.count - 1)
		t.ids = append(t.ids, rec.RequestID)
		setArrival(rec, t.injection(rec))
		t.injected(row, place)
		return rec, nil
	}
	if t.err != nil {
		return nil, t.err
	}
	return nil, io.EOF
}

// takeStreamed takes the next row and checks its order; false at the end
// (t.err set on an error).
func (t *Trace) takeStreamed() (*aheadRow, bool) {
	if t.eof {
		return nil, false
	}
	if t.ah == nil {
		t.ah = startAhead(t.streamed, -1, t.hasher)
	}
	row, err := t.ah.next()
	if errors.Is(err, io.EOF) {
		t.eof = true
		t.err = t.ah.close()
		t.ah = nil
		if p := t.prefixes; t.err == nil && p != nil && (p.rows != t.n || p.fp != t.readFP) {
			t.err = ErrRowsChanged
		}
		return nil, false
	}
	if err != nil {
		t.err = err
		return nil, false
	}
	rec := &row.rec
	if t.prefixes != nil {
		t.readFP = fingerprint(t.readFP, rec.HashIDs)
	}
	if t.n > 0 && rec.RequestID <= t.lastID {
		t.err = ErrNotInOrder
		return nil, false
	}
	t.n++
	t.lastID = rec.RequestID
	if t.opts.SkipFailed && rec.Status != "ok" {
		t.skipped++
		return row, true
	}
	key := t.injection(rec)
	if key < 0 || (t.count > 0 && key < t.last) {
		t.err = ErrNotInOrder
		return nil, false
	}
	if t.count == 0 {
		t.first = key
	}
	t.last = key
	t.count++
	return row, true
}

// Finish reads the rows of a streamed trace that the replay did not take
// (it stopped at its horizon), checking them as Next does, so that Len
// and Skipped count the whole trace and a row out of order anywhere is
// found (ErrNotInOrder). It returns the first error of the reading.
func (t *Trace) Finish() error {
	if t.streamed == nil {
		return nil
	}
	for t.err == nil {
		if _, ok := t.takeStreamed(); !ok {
			break
		}
	}
	return t.err
}
