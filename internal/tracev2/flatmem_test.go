package tracev2

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"testing"
)

// streamGen produces a single-stream trace of n rows on the fly, cycling
// through a few pre-rendered rows, so the input itself takes no memory.
type streamGen struct {
	head  []byte
	rows  [][]byte
	n, i  int
	cur   []byte
	ended bool
}

func newStreamGen(t testing.TB, n int) *streamGen {
	var head bytes.Buffer
	if err := EncodeHeader(&head, sampleHeader(ModeGenerated)); err != nil {
		t.Fatal(err)
	}
	g := &streamGen{head: prefixLines(head.Bytes(), "#"), n: n}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, benchColumns)
	if err != nil {
		t.Fatal(err)
	}
	g.head = append(g.head, buf.Bytes()...)
	for i := 0; i < 1000; i++ {
		buf.Reset()
		rec := benchRecord(i)
		w.Write(&rec)
		g.rows = append(g.rows, bytes.Clone(buf.Bytes()))
	}
	g.cur = g.head
	return g
}

func (g *streamGen) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(g.cur) == 0 {
			if g.i == g.n {
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			g.cur = g.rows[g.i%len(g.rows)]
			g.i++
		}
		k := copy(p[n:], g.cur)
		g.cur = g.cur[k:]
		n += k
	}
	return n, nil
}

// copyTrace streams every row of r into w, sampling the heap as it goes,
// and returns the largest HeapAlloc seen.
func copyTrace(t testing.TB, r *Reader, w *TraceWriter) (rows int, peak uint64) {
	t.Helper()
	var rec Record
	var ms runtime.MemStats
	for {
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return rows, peak
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
		rows++
		if rows%100_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
}

// convertBothWays converts an n-row single stream to the two-file form and
// back, and returns the peak heap of each direction.
func convertBothWays(t testing.TB, n int) (peak1, peak2 uint64) {
	dir := t.TempDir()
	hp, dp, _ := PrefixPaths(filepath.Join(dir, "big"))
	r, h, err := Open(Input{Path: "-", Stdin: newStreamGen(t, n)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tw, err := CreateFiles(hp, dp, h, r.Columns(), true)
	if err != nil {
		t.Fatal(err)
	}
	rows, peak1 := copyTrace(t, r, tw)
	if err := tw.Close(h); err != nil {
		t.Fatal(err)
	}
	if rows != n {
		t.Fatalf("single -> two-file copied %d rows, want %d", rows, n)
	}
	r2, h2, err := Open(Input{Path: dp}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	var out countWriter
	sw, err := NewStreamWriter(&out, h2, r2.Columns())
	if err != nil {
		t.Fatal(err)
	}
	rows, peak2 = copyTrace(t, r2, sw)
	if err := sw.Close(nil); err != nil {
		t.Fatal(err)
	}
	if rows != n {
		t.Fatalf("two-file -> single copied %d rows, want %d", rows, n)
	}
	return peak1, peak2
}

// TestConvertFlatMemory converts a 200k-row trace both ways and checks that
// the heap stays flat: a reader or writer that kept rows would need over
// 60 MiB here. BenchmarkConvert1M runs the same on a million rows.
func TestConvertFlatMemory(t *testing.T) {
	const bound = 32 << 20
	n := 200_000
	if testing.Short() {
		n = 50_000
	}
	peak1, peak2 := convertBothWays(t, n)
	if peak1 > bound || peak2 > bound {
		t.Errorf("peak heap %d / %d bytes exceeds %d: memory grows with the rows", peak1, peak2, bound)
	}
}

// BenchmarkConvert1M converts a 1M-row trace single -> two-file -> single
// and reports the peak heap.
func BenchmarkConvert1M(b *testing.B) {
	var peak uint64
	for i := 0; i < b.N; i++ {
		p1, p2 := convertBothWays(b, 1_000_000)
		peak = max(peak, p1, p2)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
