package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"servesim/internal/tracev2"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// okRec builds an ok streaming row with the given times (µs) and token counts.
func okRec(id, send, first, last int64, in, out int) tracev2.Record {
	return tracev2.Record{
		RequestID: id, Streaming: true, InputTokens: in, OutputTokens: out,
		ArrivalTimeUs: send, SendTimeUs: send, FirstChunkTimeUs: first, LastChunkTimeUs: last,
		NumChunks: out + 1, Status: "ok", FinishReason: "stop",
	}
}

// simOf builds a tracev2.SimResult with the given server-side latencies.
func simOf(id int64, ttft, e2e float64, in, out int) tracev2.SimResult {
	return tracev2.SimResult{RequestID: id, TTFTUs: ttft, E2EUs: e2e, InputTokens: in, OutputTokens: out}
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden %s: %v (run with -update to create it)", path, err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from golden (run go test -update and review the diff)\ngot:\n%s", path, clip(string(got)))
	}
}

func clip(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "\n...[clipped]"
	}
	return s
}

// build runs Build with the default config and fails the test on error.
func build(t *testing.T, in Input, mod func(*Config)) *Report {
	t.Helper()
	cfg := DefaultConfig()
	if mod != nil {
		mod(&cfg)
	}
	r, err := Build(in, cfg)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return r
}

func near(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	scale := 1.0
	if b > 1 || b < -1 {
		scale = b
		if scale < 0 {
			scale = -scale
		}
	}
	return d <= 1e-9*scale
}
