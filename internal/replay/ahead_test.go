package replay

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"servesim/internal/tracev2"
)

// leadReader serves n rows and records how far its reads ever ran ahead
// of the rows the test has taken (taken is advanced by the test).
type leadReader struct {
	n, read     int
	taken, lead atomic.Int64
	closed      atomic.Bool
	failAt      int // a read error at this row (0 = none)
}

func (r *leadReader) Read(rec *tracev2.Record) error {
	if r.read == r.failAt && r.failAt > 0 {
		return errors.New("disk on fire")
	}
	if r.read == r.n {
		return io.EOF
	}
	r.read++
	if d := int64(r.read) - r.taken.Load(); d > r.lead.Load() {
		r.lead.Store(d)
	}
	*rec = tracev2.Record{RequestID: int64(r.read - 1)}
	return nil
}

func (r *leadReader) Close() error {
	r.closed.Store(true)
	return nil
}

// TestAheadBounded: rows come in file order, and the reading goroutine
// never runs more than a few batches ahead of what was taken, so reading
// ahead costs bounded memory whatever the trace's length.
func TestAheadBounded(t *testing.T) {
	rd := &leadReader{n: 20_000}
	a := startAhead(rd, rd.n, nil)
	for i := 0; i < rd.n; i++ {
		row, err := a.next()
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if row.rec.RequestID != int64(i) {
			t.Fatalf("row %d came as row %d", row.rec.RequestID, i)
		}
		rd.taken.Add(1)
	}
	if _, err := a.next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last row: %v, want EOF", err)
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	// The batch being filled, the ones waiting and the one being taken.
	if bound := int64((aheadDepth + 2) * aheadBatch); rd.lead.Load() > bound || rd.lead.Load() < aheadFirst {
		t.Errorf("read up to %d rows ahead, want at least %d and at most %d", rd.lead.Load(), aheadFirst, bound)
	}
	if !rd.closed.Load() {
		t.Error("reader not closed")
	}
}

// TestAheadStopsAndFails: a reading error comes after the rows before it;
// closing a reading that is still running stops its goroutine and closes
// the reader; a reading stops at n rows however long the file.
func TestAheadStopsAndFails(t *testing.T) {
	rd := &leadReader{n: 1000, failAt: 300}
	a := startAhead(rd, rd.n, nil)
	for i := 0; i < 300; i++ {
		if _, err := a.next(); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if _, err := a.next(); err == nil || err.Error() != "disk on fire" {
		t.Errorf("after 300 rows: %v, want the reader's error", err)
	}
	a.close()

	rd = &leadReader{n: 1 << 20}
	a = startAhead(rd, rd.n, nil)
	if _, err := a.next(); err != nil {
		t.Fatal(err)
	}
	if err := a.close(); err != nil || !rd.closed.Load() {
		t.Errorf("close: %v, reader closed %v", err, rd.closed.Load())
	}
	if rd.read >= rd.n {
		t.Errorf("a stopped reading read all %d rows", rd.read)
	}

	rd = &leadReader{n: 100}
	a = startAhead(rd, 40, nil)
	for i := 0; i < 40; i++ {
		a.next()
	}
	if _, err := a.next(); !errors.Is(err, io.EOF) || rd.read != 40 {
		t.Errorf("after 40 of 100 rows: %v with %d read, want EOF after 40", err, rd.read)
	}
	a.close()
}
