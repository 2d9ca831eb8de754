package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"servesim/internal/testkit/clitest"
	"servesim/internal/testkit/shareddata"
)

// benchTraces are the production traces of the speed table (docs/performance.md): the repository's
// slices (a fresh clone has them) and the whole traces (from ../shared/data,
// skipped when absent).
var benchTraces = []struct{ name, rel string }{
	{"azure-conv-10min", "azure-llm-2023/AzureLLMInferenceTrace_conv_10min.csv"},
	{"mooncake-conv-5min", "mooncake/conversation_trace_5min.jsonl"},
	{"azure-conv", "azure-llm-2023/data/AzureLLMInferenceTrace_conv.csv"},
	{"mooncake-conv", "mooncake/FAST25-release/traces/conversation_trace.jsonl"},
}

// BenchmarkReplay times the whole `replay` command in-process on a
// production trace, as a user runs it (`replay TRACE > sim.json`): the
// format's detection and import, the trace's preparation, the replay
// adapter (token ids, Mooncake's hash ids), the simulation on the default
// deployment, the metrics and every SimResult as JSON on stdout (counted,
// then discarded), with --metrics-out. It reports replayed requests per
// second of wall and CPU time, the peak heap (clitest.Measure) and
// allocations, for trained-physics (BLIS's model) and physics (the default).
//
//	go test ./cmd/replay -run '^$' -bench 'Replay/' -benchmem
func BenchmarkReplay(b *testing.B) {
	for _, tr := range benchTraces {
		for _, latency := range []string{"trained-physics", "physics"} {
			b.Run(tr.name+"/"+latency, func(b *testing.B) {
				path := shareddata.Path(b, tr.rel)
				metricsOut := filepath.Join(b.TempDir(), "metrics.json")
				args := []string{"replay", path, "--quiet", "--latency-model", latency, "--metrics-out", metricsOut}
				b.ReportAllocs()
				var runs []clitest.Measured
				var results resultCounter
				for i := 0; i < b.N; i++ {
					results = resultCounter{}
					var err error
					runs = append(runs, clitest.Measure(func() {
						err = run(context.Background(), args, bytes.NewReader(nil), &results, io.Discard)
					}))
					if err != nil {
						b.Fatal(err)
					}
				}
				injected := checkMetrics(b, metricsOut, results.n)
				clitest.Report(b, int(injected), "req", runs)
			})
		}
	}
}

// checkMetrics checks that the summary file accounts for every request and
// that stdout held one SimResult per completed request; it returns the
// number of requests replayed.
func checkMetrics(b *testing.B, path string, results int) int64 {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	c, err := clitest.ReadCounts(data)
	if err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	if int64(results) != c.Completed {
		b.Fatalf("%d SimResults on stdout for %d completed requests", results, c.Completed)
	}
	return c.Injected
}

// resultCounter discards a SimResult JSON array, counting its objects by
// their "request_id" keys (which may straddle writes).
type resultCounter struct {
	n          int
	tail, edge []byte
}

var resultKey = []byte(`"request_id"`)

func (c *resultCounter) Write(p []byte) (int, error) {
	k := len(resultKey) - 1
	// A key that starts in the last write's tail (k bytes hold no whole key).
	edge := append(c.edge[:0], c.tail...)
	edge = append(edge, p[:min(len(p), k)]...)
	c.n += bytes.Count(edge, resultKey) + bytes.Count(p, resultKey)
	if len(p) >= k {
		c.tail = append(c.tail[:0], p[len(p)-k:]...)
	} else {
		c.tail = append(c.tail[:0], edge[max(0, len(edge)-k):]...)
	}
	c.edge = edge
	return len(p), nil
}
