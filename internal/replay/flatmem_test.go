package replay

import (
	"errors"
	"io"
	"runtime"
	"testing"

	"servesim/internal/tracev2"
)

// genRows generates n rows in completion order (each listed up to 64 rows
// after its send) without storing them.
type genRows struct{ n int }

func (g genRows) Open() (RowReader, error) { return &genReader{n: g.n}, nil }

type genReader struct{ n, i int }

func (r *genReader) Read(rec *tracev2.Record) error {
	if r.i >= r.n {
		return io.EOF
	}
	// Blocks of 64 rows listed in reverse: row i of the file is request
	// block·64 + 63 − i%64.
	id := int64(r.i/64*64 + 63 - r.i%64)
	if id >= int64(r.n) {
		id = int64(r.i)
	}
	*rec = tracev2.Record{RequestID: id, ClientID: "c", ArrivalTimeUs: id * 1000, SendTimeUs: id*1000 + 7,
		InputTokens: 100, OutputTokens: 10, Status: "ok"}
	r.i++
	return nil
}

func (r *genReader) Close() error { return nil }

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestTraceMemoryFlat: preparing and streaming a trace keeps about 12 bytes
// per row (place and request id), not the rows (~400 bytes each).
func TestTraceMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 300k rows")
	}
	const n = 300_000
	before := heapInUse()
	tr, err := NewTrace(genRows{n}, TraceOptions{Ordinals: true})
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	for i := 0; ; i++ {
		rec, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.RequestID != int64(i) {
			t.Fatalf("place %d: request %d", i, rec.RequestID)
		}
		tr.Ordinal(rec.RequestID) // as the trace writer does
		if i%50_000 == 0 {
			peak = max(peak, heapInUse())
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	perRow := float64(peak-min(before, peak)) / n
	t.Logf("%.1f bytes per row", perRow)
	if perRow > 40 {
		t.Errorf("%.1f bytes per row in use while streaming, want at most 40", perRow)
	}
	runtime.KeepAlive(tr)
}
