package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/replay"
	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// realRunTrace converts LLMServingSim's RTX 4090 run (300 ShareGPT
// requests on Llama-3.1-8B, vLLM 0.19) into a mode-real single-stream trace
// in a temporary directory, or skips when the data is absent.
func realRunTrace(t *testing.T) ([]tracev2.Record, string) {
	t.Helper()
	run := filepath.Join(shareddata.Path(t, "llmservingsim/bench/examples"), "RTX4090", "Llama-3.1-8B")
	imp, err := importer.OpenLLMServingSim(run, importer.Options{ClientID: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	var recs []tracev2.Record
	for rec, err := range importer.All(imp) {
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if len(recs) != 300 {
		t.Fatalf("%d requests, want 300", len(recs))
	}
	h := imp.Header() // mode real, the server block of meta.json
	realPath := filepath.Join(t.TempDir(), "real.trace")
	var stream bytes.Buffer
	if err := tracev2.WriteStream(&stream, h, tracev2.Columns{}, recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(realPath, stream.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return recs, realPath
}

// realRunDeployment is the measured deployment of realRunTrace as flags.
func realRunDeployment() []string {
	return []string{"--model", "llama-3.1-8b-instruct", "--gpu", "RTX4090",
		"--hardware-file", filepath.Join("testdata", "rtx4090_hardware.json"),
		"--total-kv-blocks", "2588", "--max-num-seqs", "256", "--max-num-batched-tokens", "2048", "--max-model-len", "32768"}
}

// TestRealVLLMRun grades the simulator against a measured vLLM run: 300
// ShareGPT requests at 10 req/s on Llama-3.1-8B and one RTX 4090 (more than it
// sustains, so the queue grows). The trace goes through the simulator with
// the measured deployment (KV blocks, batching limits) on a GPU described by
// its data-sheet figures, then through calibrate. The test checks that the
// whole report renders and grades, and that the saturation is seen.
func TestRealVLLMRun(t *testing.T) {
	recs, realPath := realRunTrace(t)
	dir := t.TempDir()

	// Replay: inject each request at its send time.
	cfg := deploy.Default()
	cfg.Model = "llama-3.1-8b-instruct" // the same architecture as the base model measured
	cfg.GPU = "RTX4090"
	cfg.HardwareFile = filepath.Join("testdata", "rtx4090_hardware.json")
	cfg.TotalKVBlocks = 2588 // vLLM's own count in meta.json
	cfg.MaxNumSeqs, cfg.MaxNumBatchedTokens, cfg.MaxModelLen = 256, 2048, 32768
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	inject := slices.Clone(recs)
	for i := range inject {
		inject[i].ArrivalTimeUs = inject[i].SendTimeUs
	}
	slices.SortStableFunc(inject, func(a, b tracev2.Record) int { return int(a.ArrivalTimeUs - b.ArrivalTimeUs) })
	var sims []tracev2.SimResult
	_, err = replay.Simulate(context.Background(), replay.Config{Deploy: dep, Seed: 42},
		&replay.SliceSource{Records: inject}, nil,
		func(_ *tracev2.Record, res *tracev2.SimResult) error {
			if res != nil {
				sims = append(sims, *res)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	var simBuf bytes.Buffer
	if err := tracev2.WriteSimResults(&simBuf, sims, tracev2.SimResultArray); err != nil {
		t.Fatal(err)
	}
	simPath := filepath.Join(dir, "sim.json")
	if err := os.WriteFile(simPath, simBuf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	html, jsonPath := filepath.Join(dir, "r.html"), filepath.Join(dir, "r.json")
	text, errs, code := runCmd(t, "", realPath, simPath, "--html", html, "--report", jsonPath,
		"--assert", "trace.matched_pairs==300,validity.saturated==true")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, errs, text)
	}
	t.Logf("calibrate over the real RTX 4090 run:\n%s", text)
	r := decodeReport(t, readFile(t, jsonPath))
	if r.TraceInfo.MatchedPairs != 300 {
		t.Errorf("matched %d, want 300", r.TraceInfo.MatchedPairs)
	}
	for _, m := range []string{"ttft", "e2e", "tpot"} {
		c, ok := r.Metrics[m]
		if !ok {
			t.Errorf("metric %s missing", m)
			continue
		}
		switch c.RequestLevel.Quality {
		case "excellent", "good", "fair", "poor":
		default:
			t.Errorf("%s grade %q", m, c.RequestLevel.Quality)
		}
		if c.RequestLevel.MAPE <= 0 || math.IsNaN(c.RequestLevel.MAPE) {
			t.Errorf("%s MAPE %v", m, c.RequestLevel.MAPE)
		}
	}
	if page := readFile(t, html); strings.Count(page, "<svg") != 11 {
		t.Errorf("HTML holds %d plots, want 11 (3 metrics without ITL data, ttft and e2e over the run)", strings.Count(page, "<svg"))
	}
}
