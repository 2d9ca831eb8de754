package workload

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkNext measures lazy generation: requests per second and
// allocations per request (b.N requests of one unbounded stream).
func BenchmarkNext(b *testing.B) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"chatbot", Options{Preset: "chatbot", Rate: ptr(100.0)}},
		{"summarization", Options{Preset: "summarization", Rate: ptr(100.0)}},
		{"chatbot-prefix-gamma", Options{Preset: "chatbot", Rate: ptr(100.0), Arrival: ptr("gamma"), PrefixTokens: ptr(512)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tc.o.NumRequests = ptr(int64(0))
			tc.o.Horizon = ptr(time.Duration(1 << 60))
			src := mustResolve(b, tc.o).NewSource()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, ok := src.Next(); !ok {
					b.Fatal("stream ended")
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// BenchmarkSessions drives closed-loop accumulating sessions through
// OnComplete (every round completes 10 ms after arrival).
func BenchmarkSessions(b *testing.B) {
	spec := sessionSpec(fmt.Sprintf("num_requests: %d\n", b.N), "    reasoning:\n      multi_turn: {max_rounds: 8, think_time_us: 1000, context_growth: accumulate}\n")
	src := mustDecode(b, spec).NewSource()
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for n < b.N {
		r, ok := src.Next()
		if !ok {
			break
		}
		for ; ok && n < b.N; r, ok = src.OnComplete(r.ID, r.ArrivalUs+10000, r.OutputTokens) {
			n++
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkPregenerated is the counting pass behind follow-up ids, per
// pre-generated request.
func BenchmarkPregenerated(b *testing.B) {
	w := mustResolve(b, Options{Preset: "chatbot", Rate: ptr(100.0), NumRequests: ptr(int64(b.N))})
	b.ReportAllocs()
	b.ResetTimer()
	if got := w.NewSource().Pregenerated(); got != int64(b.N) {
		b.Fatalf("Pregenerated = %d, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkTokenFill is the cost of materialising token ids, per id.
func BenchmarkTokenFill(b *testing.B) {
	var ts tokenStream
	buf := make([]int32, 4096)
	b.ResetTimer()
	for i := range b.N {
		ts.reset(uint64(i))
		ts.fill(buf)
	}
	b.ReportMetric(float64(b.N)*4096/b.Elapsed().Seconds(), "ids/s")
}
