package replay

import (
	"context"
	"errors"
	"io"
	"runtime"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
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

// runPeakHeap simulates the reference workload of docs/performance.md (28 req/s, 512±128
// and 256±64 tokens, Qwen3-14B on one H100) with n requests and the given
// latency model, as `run` does, and returns the peak of the heap in use,
// read after a collection every 4096 finished requests.
func runPeakHeap(t *testing.T, n int64, latency string) uint64 {
	t.Helper()
	rate, in, inSD, out, outSD := 28.0, 512, 128, 256, 64
	wl, err := workload.Resolve(workload.Options{NumRequests: &n, Rate: &rate, PromptTokens: &in,
		PromptTokensStdev: &inSD, OutputTokens: &out, OutputTokensStdev: &outSD})
	if err != nil {
		t.Fatal(err)
	}
	cfg := deploy.Default()
	cfg.LatencyModel = latency
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rcfg := WorkloadConfig(wl, dep)
	var peak uint64
	rcfg.Progress = func(_, done int64) {
		if done%4096 == 0 {
			peak = max(peak, heapInUse())
		}
	}
	res, err := SimulateWorkload(context.Background(), rcfg, wl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.InjectedRequests != n {
		t.Fatalf("injected %d of %d", res.Summary.InjectedRequests, n)
	}
	return peak
}

// TestRunMemoryFlat: a run keeps what its requests in flight need and,
// for exact percentiles, 20 bytes per completed request (4 for each of
// TTFT, E2E and scheduling delay, 8 for TPOT): 180k more requests cost at
// most 32 bytes more each, whether they complete (trained-physics) or
// mostly queue until they time out (physics, which one H100 cannot keep up
// with at 28 req/s). Both runs are long enough for physics's queue to have
// reached what the request timeout holds (about 30k requests in), so the
// difference is what the added requests keep, not a queue still growing.
func TestRunMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 280k requests")
	}
	for _, latency := range []string{"trained-physics", "physics"} {
		small, large := runPeakHeap(t, 50_000, latency), runPeakHeap(t, 230_000, latency)
		perReq := (float64(large) - float64(small)) / 180_000
		t.Logf("%s: peak heap %.1f MB at 50k requests, %.1f MB at 230k: %.1f bytes per added request",
			latency, float64(small)/(1<<20), float64(large)/(1<<20), perReq)
		if perReq > 32 {
			t.Errorf("%s: %.1f bytes per added request, want at most 32", latency, perReq)
		}
	}
}
