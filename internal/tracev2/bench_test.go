package tracev2

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time: on a shared machine it
// measures the work better than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs body b.N times on a reset timer, each run handling benchRows
// rows, and reports rows/s, rows per CPU second and allocations per row.
func measure(b *testing.B, body func()) {
	b.ReportAllocs()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	start, cpu0 := time.Now(), cpuTime()
	b.ResetTimer()
	for range b.N {
		body()
	}
	b.StopTimer()
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	total := float64(b.N) * benchRows
	b.ReportMetric(total/elapsed.Seconds(), "rows/s")
	if cpu > 0 {
		b.ReportMetric(total/cpu.Seconds(), "cpu-rows/s")
	}
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/total, "allocs/row")
}

// benchRows is the size of the benchmark trace.
const benchRows = 100_000

// benchColumns is a real-mode column set: vllm_priority, x_request_id and
// two ext_ columns.
var benchColumns = Columns{VLLMPriority: true, XRequestID: true, FirstTokenTime: true, CachedTokens: true}

// benchRecord makes row i of a realistic real-mode trace: a few clients,
// tenants and classes, sessions of three rounds, a unique x_request_id.
func benchRecord(i int) Record {
	classes := [...]string{"critical", "standard", "batch", "sheddable", "background"}
	clients := [...]string{"web", "mobile", "batch-jobs", "agent", "search"}
	class := classes[i%len(classes)]
	arrival := int64(i) * 12_345
	rec := Record{
		RequestID: int64(i), ClientID: clients[i%len(clients)], TenantID: []string{"acme", "beta", "gamma"}[i%3],
		SLOClass: class, VLLMPriority: VLLMPriority(class), SessionID: fmt.Sprintf("sess_%d", i/3), RoundIndex: i % 3,
		PrefixGroup: []string{"", "sys", "rag"}[i%3], PrefixLength: 64 * (i % 3), Streaming: true,
		InputTokens: 100 + i%900, OutputTokens: 20 + i%300, ReasonRatio: []float64{0, 0.25}[i%2],
		ServerInputTokens: 170 + i%900, ArrivalTimeUs: arrival, SendTimeUs: arrival + 150,
		FirstChunkTimeUs: arrival + 40_000, LastChunkTimeUs: arrival + 900_000, NumChunks: 22 + i%300,
		Status: "ok", FinishReason: "stop", XRequestID: fmt.Sprintf("%08x-2a7d-4f0e-9c1b-%012x", i, i*7919),
		FirstTokenTimeUs: arrival + 40_100, CachedTokens: 64 * (i % 3),
	}
	if i%97 == 0 {
		rec.Status, rec.ErrorMessage, rec.FinishReason = "error", "HTTP 503: server overloaded", ""
		rec.FirstChunkTimeUs, rec.LastChunkTimeUs, rec.NumChunks, rec.FirstTokenTimeUs = 0, 0, 0, 0
	}
	return rec
}

func benchData(tb testing.TB) []byte {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, benchColumns)
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i < benchRows; i++ {
		rec := benchRecord(i)
		if err := w.Write(&rec); err != nil {
			tb.Fatal(err)
		}
	}
	return buf.Bytes()
}

// BenchmarkRead reads a 100k-row trace; it reports rows/s and allocations
// per row (targets: >= 1M rows/s on one core, <= 2 allocs/row).
func BenchmarkRead(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	measure(b, func() {
		r, err := NewReader(bytes.NewReader(data), "bench.csv", Options{})
		if err != nil {
			b.Fatal(err)
		}
		var rec Record
		rows := 0
		for {
			err := r.Read(&rec)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
		if rows != benchRows {
			b.Fatalf("read %d rows, want %d", rows, benchRows)
		}
	})
}

// BenchmarkWrite writes a 100k-row trace to io.Discard.
func BenchmarkWrite(b *testing.B) {
	recs := make([]Record, benchRows)
	for i := range recs {
		recs[i] = benchRecord(i)
	}
	measure(b, func() {
		w, err := NewWriter(io.Discard, benchColumns)
		if err != nil {
			b.Fatal(err)
		}
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadEncodingCSV is a reference on the same machine and load:
// encoding/csv only splitting the same 100k rows (ReuseRecord, no parsing,
// no validation).
func BenchmarkReadEncodingCSV(b *testing.B) {
	data := benchData(b)
	measure(b, func() {
		cr := csv.NewReader(bytes.NewReader(data))
		cr.ReuseRecord = true
		rows := -1
		for {
			_, err := cr.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
		if rows != benchRows {
			b.Fatalf("read %d rows, want %d", rows, benchRows)
		}
	})
}

// BenchmarkReadSimResults reads benchRows SimResults as JSON Lines (replay's
// pipe format) with the scanner, and with encoding/json alone for
// comparison.
//
//	go test ./internal/tracev2 -run '^$' -bench ReadSimResults -benchmem
func BenchmarkReadSimResults(b *testing.B) {
	sims := make([]SimResult, benchRows)
	for i := range sims {
		sims[i] = SimResult{RequestID: int64(i), TTFTUs: 30_000 + float64(i%977)*13.25, E2EUs: 900_000 + float64(i%7919),
			InputTokens: 100 + i%900, OutputTokens: 20 + i%300, SLOClass: []string{"critical", "standard", "batch"}[i%3],
			ITLMeanUs: 12_000.5 + float64(i%13), ArrivalUs: int64(i) * 12_345, SchedulingDelayUs: float64(i % 5000),
			CachedInputTokens: 32 * (i % 3), Instance: "instance_0"}
	}
	var buf bytes.Buffer
	if err := WriteSimResults(&buf, sims, SimResultJSONL); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for _, path := range []struct {
		name string
		slow bool
	}{{"scanner", false}, {"encoding-json", true}} {
		b.Run(path.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			measure(b, func() {
				got, err := readSimResults(bytes.NewReader(data), "s.jsonl", path.slow)
				if err != nil || len(got) != benchRows {
					b.Fatalf("%d results, %v", len(got), err)
				}
			})
		})
	}
}
