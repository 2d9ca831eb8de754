package replay

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// loadShared imports a trace from ../shared/data, or skips.
func loadShared(b *testing.B, format importer.Format, rel string) []tracev2.Record {
	b.Helper()
	dir, err := os.Getwd()
	if err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			b.Skip("no go.mod above the package")
		}
		dir = filepath.Dir(dir)
	}
	path := filepath.Join(dir, "..", "shared", "data", rel)
	f, err := os.Open(path)
	if err != nil {
		b.Skipf("real trace not available: %v", err)
	}
	defer f.Close()
	imp, err := importer.Open(format, path, f, importer.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var recs []tracev2.Record
	for rec, err := range importer.All(imp) {
		if err != nil {
			b.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// benchmarkReplay replays a real trace on the default deployment (Qwen3-14B,
// one H100) and reports simulated requests per second: the simulation and
// the replay adapter alone, the trace imported beforehand and nothing
// written (cmd/replay's BenchmarkReplay times the whole command).
func benchmarkReplay(b *testing.B, format importer.Format, rel string) {
	recs := loadShared(b, format, rel)
	dep, err := deploy.Resolve(deploy.Default())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cp := append([]tracev2.Record(nil), recs...)
		b.StartTimer()
		tr, err := NewTrace(RecordRows(cp), TraceOptions{})
		if err != nil {
			b.Fatal(err)
		}
		// Importers number their rows, as replay checks (UniqueIDs).
		out, err := Simulate(context.Background(), Config{Deploy: dep, Seed: 42, UniqueIDs: true}, tr, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if out.Summary.InjectedRequests != int64(len(recs)) {
			b.Fatalf("injected %d of %d", out.Summary.InjectedRequests, len(recs))
		}
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
}

func BenchmarkReplayAzureConv(b *testing.B) {
	benchmarkReplay(b, importer.FormatAzure, "azure-llm-2023/data/AzureLLMInferenceTrace_conv.csv")
}

func BenchmarkReplayMooncakeConv(b *testing.B) {
	benchmarkReplay(b, importer.FormatMooncake, "mooncake/FAST25-release/traces/conversation_trace.jsonl")
}
