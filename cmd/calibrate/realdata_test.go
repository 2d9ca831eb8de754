package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// sharedData finds ../shared/data beside the module root, or skips.
func sharedData(t *testing.T, rel string) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("no go.mod above the test directory")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", rel)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real measurements absent (%s): skipping", p)
	}
	return p
}

// benchLine is one request of LLMServingSim's requests.jsonl (a real vLLM 0.19
// run; MIT, see the data's PROVENANCE.md). arrival_time is the client's epoch
// clock in s; queued_ts, first_token_ts and last_token_ts the engine's
// monotonic clock in s.
type benchLine struct {
	RequestID    string  `json:"request_id"`
	InputToks    int     `json:"input_toks"`
	OutputToks   int     `json:"output_toks"`
	ArrivalTime  float64 `json:"arrival_time"`
	QueuedTS     float64 `json:"queued_ts"`
	FirstTokenTS float64 `json:"first_token_ts"`
	LastTokenTS  float64 `json:"last_token_ts"`
}

// benchTrace converts a requests.jsonl into a mode-real trace. The two clocks
// are tied together by the earliest request: no request can be queued before
// it arrives, so the smallest queued − arrival is taken as the clock offset
// (the same reasoning as tracev2.md §5 for epoch send times). Queueing in the
// engine plays the send; every time becomes µs from the first arrival (plus
// 1 µs, since 0 means "never").
func benchTrace(t *testing.T, path string) []tracev2.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []benchLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l benchLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	first, offset := math.Inf(1), math.Inf(1)
	for _, l := range lines {
		first = min(first, l.ArrivalTime)
		offset = min(offset, l.QueuedTS-l.ArrivalTime)
	}
	us := func(s float64) int64 { return int64(math.Round(s*1e6)) + 1 }
	recs := make([]tracev2.Record, 0, len(lines))
	for _, l := range lines {
		id, err := strconv.ParseInt(strings.TrimPrefix(l.RequestID, "bench-"), 10, 64)
		if err != nil {
			t.Fatalf("%s: request_id %q is not bench-<n>", path, l.RequestID)
		}
		recs = append(recs, tracev2.Record{
			RequestID: id, ClientID: "bench", Streaming: true, InputTokens: l.InputToks, OutputTokens: l.OutputToks,
			TextTokens: l.InputToks, ServerInputTokens: l.InputToks, Model: "meta-llama/Llama-3.1-8B",
			ArrivalTimeUs: us(l.ArrivalTime - first), SendTimeUs: us(l.QueuedTS - offset - first),
			FirstChunkTimeUs: us(l.FirstTokenTS - offset - first), LastChunkTimeUs: us(l.LastTokenTS - offset - first),
			NumChunks: l.OutputToks, Status: "ok", FinishReason: "length",
		})
	}
	return recs
}

// realRunTrace converts LLMServingSim's RTX 4090 run (300 ShareGPT
// requests on Llama-3.1-8B, vLLM 0.19) into a mode-real single-stream trace
// in a temporary directory, or skips when the data is absent.
func realRunTrace(t *testing.T) ([]tracev2.Record, string) {
	t.Helper()
	run := filepath.Join(sharedData(t, "llmservingsim/bench/examples"), "RTX4090", "Llama-3.1-8B", "vllm")
	recs := benchTrace(t, filepath.Join(run, "requests.jsonl"))
	if len(recs) != 300 {
		t.Fatalf("%d requests, want 300", len(recs))
	}
	h := tracev2.DefaultHeader()
	h.Mode = "real"
	h.WorkloadSpec = "sharegpt-llama-3.1-8b-300-sps10.jsonl"
	h.Server = &tracev2.Server{Model: "meta-llama/Llama-3.1-8B", TensorParallel: 1, MaxNumSeqs: 256,
		BlockSize: 16, GPUMemoryUtilization: 0.9, MaxModelLen: 32768}
	realPath := filepath.Join(t.TempDir(), "real.trace")
	var stream bytes.Buffer
	tw, err := tracev2.NewStreamWriter(&stream, h, tracev2.Columns{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := tw.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(nil); err != nil {
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
	if page := readFile(t, html); strings.Count(page, "<svg") != 9 {
		t.Errorf("HTML holds %d plots, want 9 (3 metrics without ITL data)", strings.Count(page, "<svg"))
	}
}
