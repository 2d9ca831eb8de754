package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"servesim/internal/tracev2"
)

// The fixtures in testdata are written by fixtures() and checked against it on
// every run, so they never drift from the code that documents them; -update
// rewrites them (with the goldens).
//
// real.yaml + real.csv: a mode-real trace of 40 requests, ids 0..39, two SLO
// classes, one request that failed (status error, id 17) and one with no
// simulated result (id 31); real.itl.csv beside it (found automatically) holds
// the streamed chunks of every ok request. sim.json: the SimResults, a few
// percent off the real latencies with a deterministic pseudo-random error.
// sim_metrics.json: the summary keys calibrate reads.

const (
	fixtureRows   = 40
	failedID      = 17
	missingSimID  = 31
	fixtureRTTUs  = 500 // header network.measured_rtt_ms = 0.5
	fixtureSendUs = 150 // client lag from arrival to send
)

func fixtureHeader() *tracev2.Header {
	h := tracev2.DefaultHeader()
	h.Mode = "real"
	h.CreatedAt = "2026-03-01T10:00:00.000000Z"
	seed := int64(7)
	h.WorkloadSeed = &seed
	h.WorkloadSpec = "preset:chatbot"
	h.Server = &tracev2.Server{Model: "qwen3-14b", TensorParallel: 1, MaxNumSeqs: 256, BlockSize: 16}
	h.Network = &tracev2.Network{MeasuredRTTMs: float64(fixtureRTTUs) / 1000}
	h.GoodputSLOTargets = map[string]tracev2.SLOTargets{
		"critical": {TTFTMs: 120, E2EMs: 2500},
		"standard": {TTFTMs: 400},
	}
	h.ObservedKVMetrics = &tracev2.ObservedKVMetrics{Source: "gpu-prefix-cache-fallback", HitRate: 0.412, BlockHits: 412, BlockQueries: 1000}
	return h
}

type fixtureSet struct {
	header  *tracev2.Header
	records []tracev2.Record
	itl     map[int64][]int64
	sims    []tracev2.SimResult
}

func buildFixtures() fixtureSet {
	rng := rand.New(rand.NewPCG(42, 6))
	noise := func(spread float64) float64 { return 1 + spread*(2*rng.Float64()-1) }
	fs := fixtureSet{header: fixtureHeader(), itl: map[int64][]int64{}}
	for i := range int64(fixtureRows) {
		class := "standard"
		if i%2 == 0 {
			class = "critical"
		}
		prompt := 64 + int(rng.IntN(900))
		out := 16 + int(rng.IntN(96))
		arrival := 1_000 + i*180_000
		send := arrival + fixtureSendUs
		ttft := int64(float64(35_000+40*prompt) * noise(0.08))
		tpot := 11_000 + int64(rng.IntN(3_000))
		first := send + ttft
		chunks := []int64{first}
		t := first
		for k := 1; k < out; k++ {
			t += int64(float64(tpot) * noise(0.3))
			chunks = append(chunks, t)
		}
		last := t
		rec := tracev2.Record{
			RequestID: i, ClientID: "c0", SLOClass: class, Streaming: true,
			InputTokens: prompt, OutputTokens: out, TextTokens: prompt, Model: "qwen3-14b",
			ServerInputTokens: prompt, ArrivalTimeUs: arrival, SendTimeUs: send,
			FirstChunkTimeUs: first, LastChunkTimeUs: last, NumChunks: out + 1,
			Status: "ok", FinishReason: "stop",
		}
		if i == failedID {
			rec.Status, rec.ErrorMessage, rec.FinishReason = "error", "HTTP 500", ""
			rec.FirstChunkTimeUs, rec.LastChunkTimeUs, rec.NumChunks, rec.OutputTokens = 0, 0, 0, 0
		} else {
			fs.itl[i] = append(chunks, last+200) // the usage-only chunk
		}
		fs.records = append(fs.records, rec)

		if i == missingSimID {
			continue
		}
		// The simulator sees server-side time: the RTT is added back by calibrate.
		simTTFT := float64(ttft)*noise(0.06) - fixtureRTTUs
		simE2E := simTTFT + float64(last-first)*noise(0.04)
		fs.sims = append(fs.sims, tracev2.SimResult{
			RequestID: i, TTFTUs: simTTFT, E2EUs: simE2E, InputTokens: prompt, OutputTokens: max(out, rec.OutputTokens),
			SLOClass: class, Model: "qwen3-14b", ITLMeanUs: (simE2E - simTTFT) / float64(out-1),
			ArrivalUs: arrival, SchedulingDelayUs: 900, Instance: "instance_0",
		})
	}
	return fs
}

// fixtureFiles renders every fixture file.
func fixtureFiles(t *testing.T) map[string][]byte {
	t.Helper()
	fs := buildFixtures()
	dir := t.TempDir()
	if err := tracev2.WriteFiles(filepath.Join(dir, "real.yaml"), filepath.Join(dir, "real.csv"), fs.header, tracev2.Columns{}, false, fs.records); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{"real.yaml", "real.csv"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	var itl bytes.Buffer
	iw, err := tracev2.NewITLWriter(&itl)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fs.records {
		if ts, ok := fs.itl[r.RequestID]; ok {
			if err := iw.WriteRequest(r.RequestID, ts); err != nil {
				t.Fatal(err)
			}
		}
	}
	files["real.itl.csv"] = itl.Bytes()
	var sim bytes.Buffer
	if err := tracev2.WriteSimResults(&sim, fs.sims, tracev2.SimResultArray); err != nil {
		t.Fatal(err)
	}
	files["sim.json"] = sim.Bytes()
	files["sim_metrics.json"] = []byte(`{
  "completed_requests": 39,
  "cache_hit_rate": 0.387,
  "deployment": {"model": "Qwen3-14B", "tensor_parallel": 1, "max_num_seqs": 128, "block_size": 16, "max_model_len": 40960}
}
`)
	return files
}

func TestFixturesAreCurrent(t *testing.T) {
	for name, want := range fixtureFiles(t) {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./cmd/calibrate -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what fixtures() writes; run go test ./cmd/calibrate -update", path)
		}
	}
}
