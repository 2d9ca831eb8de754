package tracev2

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func str(v string) *string   { return &v }
func boolp(v bool) *bool     { return &v }
func noWarn(t *testing.T) func(string) {
	return func(msg string) { t.Errorf("unexpected warning: %s", msg) }
}

// collect returns a Warn func that appends to *got.
func collect(got *[]string) func(string) {
	return func(msg string) { *got = append(*got, msg) }
}

// sampleHeader is a header for mode, with every key that mode writes.
func sampleHeader(mode string) *Header {
	switch mode {
	case ModeReal:
		return &Header{
			TraceVersion: 3, TimeUnit: "us", CreatedAt: "2026-03-01T10:00:00.000000Z", Mode: ModeReal,
			WarmUpRequests: 2, WorkloadSeed: i64(7), WorkloadSpec: "preset:chatbot",
			Server:  &Server{Type: "vllm", Model: "acme/chat-8b", TensorParallel: 2, MaxNumSeqs: 256, BlockSize: 16, GPUMemoryUtilization: 0.9, MaxModelLen: 8192},
			Network: &Network{MeasuredRTTMs: 0.4},
			GoodputSLOTargets: map[string]SLOTargets{
				"critical": {TTFTMs: 250, E2EMs: 2000},
				"batch":    {ITLMs: 50.5},
			},
			XExt: &Ext{Tool: "observe", ToolVersion: "0.1.0", T0UnixUs: 1772359200000000, TimeOrigin: OriginRelative, Loop: "open",
				Deployment: map[string]any{"model": "acme/chat-8b", "tensor_parallel": 2, "max_num_seqs": 256, "block_size": 16,
					"gpu_memory_utilization": 0.9, "max_model_len": 8192, "total_kv_blocks": 18038},
				Client: &Client{MaxConcurrency: 64, Arrival: "poisson", RateRPS: 4.5, Streaming: "all", PrewarmConnections: 64,
					RequestTimeoutUs: 300000000, PeakInFlight: 61},
				ServerInfo: &ServerInfo{VLLMVersion: "0.10.1", CacheConfig: map[string]string{"block_size": "16", "num_gpu_blocks": "18038",
					"enable_prefix_caching": "True", "engine": "0"}, ServeArgs: "--tensor-parallel-size 2",
					Scheduler: &SchedulerInfo{PeakRunning: 61, PeakWaiting: 3, Preemptions: 0, Scrapes: 12}},
				Sources: map[string]string{"deployment.block_size": SourceMeasured, "deployment.total_kv_blocks": SourceMeasured,
					"deployment.max_model_len": SourceMeasured, "deployment.max_num_batched_tokens": SourceAbsent,
					"client.peak_in_flight": SourceMeasured},
			},
		}
	case ModeGenerated:
		return &Header{
			TraceVersion: 3, TimeUnit: "us", Mode: ModeGenerated, WorkloadSeed: i64(42),
			SessionContextGrowth: SessionAccumulate,
			GoodputSLOTargets:    map[string]SLOTargets{"critical": {TTFTMs: 250}},
			XExt: &Ext{Tool: "run", ToolVersion: "0.1.0", TimeOrigin: OriginRelative, Loop: "closed",
				Deployment: map[string]any{"model": "qwen3-14b", "gpu": "H100", "tensor_parallel": 1, "alpha_coeffs": []any{0.5, 1, 2},
					"class_priorities": map[string]any{"critical": 4}, "admission_latency": "0s"},
				Client:  &Client{Users: 8, ThinkTimeUs: 150000, Streaming: "none"},
				Sources: map[string]string{"deployment.total_kv_blocks": SourceDerived}},
		}
	default:
		return &Header{
			TraceVersion: 3, TimeUnit: "us", Mode: ModeReplayed,
			SessionContextGrowth: SessionAccumulate,
			GoodputSLOTargets:    map[string]SLOTargets{"standard": {E2EMs: 9000}},
			KVOffload: &KVOffload{
				CPUBytesToUse: i64(1 << 34), PerBlockBytes: i64(0), BlockSize: i64(16), BlocksPerChunk: i64(4),
				TokensPerHash: i64(16), EvictionPolicy: str("lru"), OffloadPromptOnly: boolp(false),
				SelfDescribingKVEvents: boolp(true),
				SecondaryTiers: []OffloadTier{{
					Type: str("fs"), RootDir: str("/mnt/kv"), NReadThreads: i64(4), NWriteThreads: i64(2),
					Locality: str("node"), EnableKVEvents: boolp(true), DirectIO: boolp(false), DeviceClass: str("nvme"),
					ReadBandwidth: f64(3000.5), WriteBandwidth: f64(1500), BaseLatency: f64(80),
					SaturationQueueDepth: i64(32), SingleTransferFraction: f64(0.25), LatencyJitterStddev: f64(0),
				}},
			},
			ObservedKVMetrics: &ObservedKVMetrics{Source: "tiered", HitRate: 0.42, BlockHits: 420, BlockQueries: 1000,
				ReadTimeTotal: f64(1.5), VLLMCommit: "abc123"},
			XExt: &Ext{Tool: "replay", TimeOrigin: OriginRelative},
		}
	}
}

// sampleColumns is the column set each mode's sample uses.
func sampleColumns(mode string) Columns {
	switch mode {
	case ModeReal:
		return Columns{VLLMPriority: true, XRequestID: true, FirstTokenTime: true, CachedTokens: true}
	case ModeGenerated:
		return Columns{SLOTarget: true, ThinkTime: true, Instance: true, Preemptions: true}
	}
	return Columns{VLLMPriority: true, SLOTarget: true, XRequestID: true, Adapter: true, ThinkTime: true,
		FirstTokenTime: true, CachedTokens: true, Instance: true, Preemptions: true, HashIDs: true}
}

// sampleRecords are the docs/tracev2.md §10 rows, plus rows with awkward strings.
func sampleRecords(mode string) []Record {
	switch mode {
	case ModeReal:
		return []Record{
			{RequestID: 3, ClientID: "web", TenantID: "acme", SLOClass: "critical", VLLMPriority: 0, PrefixGroup: "sys", PrefixLength: 64,
				Streaming: true, InputTokens: 180, OutputTokens: 24, ServerInputTokens: 251, ArrivalTimeUs: 250000, SendTimeUs: 250310,
				FirstChunkTimeUs: 291800, LastChunkTimeUs: 470200, NumChunks: 26, Status: "ok", FinishReason: "length",
				XRequestID: "0b6f4c1e-2a7d-4f0e-9c1b-5d3e8a7f6b21", FirstTokenTimeUs: 291826, CachedTokens: 64},
			{RequestID: 2, ClientID: "web", TenantID: "acme", SLOClass: "critical", VLLMPriority: 0, PrefixGroup: "sys", PrefixLength: 64,
				Streaming: true, InputTokens: 95, OutputTokens: 24, ServerInputTokens: 166, ArrivalTimeUs: 125000, SendTimeUs: 125200,
				FirstChunkTimeUs: 170100, LastChunkTimeUs: 352000, NumChunks: 26, Status: "ok", FinishReason: "length",
				XRequestID: "7e21d0a4-93c5-4b8e-a1f2-0c6d9b4e3a17", FirstTokenTimeUs: 170100, CachedTokens: 64},
			{RequestID: 4, ClientID: "bulk", TenantID: "beta", SLOClass: "batch", VLLMPriority: 5, Streaming: true, InputTokens: 900,
				ArrivalTimeUs: 375000, SendTimeUs: 375150, Status: "error", ErrorMessage: "HTTP 503: server overloaded, \"retry\"\nlater",
				XRequestID: "c4a9e2b0-5f1d-4c7a-8e3b-2d9f6a1c0e58"},
			{RequestID: 5, ClientID: " lead space", TenantID: "t,comma", SLOClass: "", Streaming: false, InputTokens: 10, OutputTokens: 1,
				ReasonRatio: 0.01, Model: `\.`, DeadlineUs: 900000, ArrivalTimeUs: 500000, SendTimeUs: 500001,
				FirstChunkTimeUs: 600000, LastChunkTimeUs: 600000, NumChunks: 1, Status: "timeout", ErrorMessage: "HTTP timeout: 300s",
				XRequestID: "x", VLLMPriority: 1},
		}
	case ModeGenerated:
		return []Record{
			{RequestID: 0, ClientID: "coder", TenantID: "t2", SLOClass: "batch", SessionID: "sess_5821", InputTokens: 40, OutputTokens: 12,
				DeadlineUs: 300080000, ArrivalTimeUs: 80000, SendTimeUs: 80000, FirstChunkTimeUs: 107400, LastChunkTimeUs: 210200,
				Status: "ok", Instance: "instance_0", SLOTargetUs: 250000},
			{RequestID: 1, ClientID: "coder", TenantID: "t2", SLOClass: "batch", SessionID: "sess_5821", RoundIndex: 1, InputTokens: 82,
				OutputTokens: 12, DeadlineUs: 300710200, ArrivalTimeUs: 710200, SendTimeUs: 710200, FirstChunkTimeUs: 736700,
				LastChunkTimeUs: 843000, Status: "ok", ThinkTimeUs: 500000, Instance: "instance_1", Preemptions: 2},
			{RequestID: 2, ClientID: "chat", TenantID: "t1", SLOClass: "critical", PrefixGroup: "sys", PrefixLength: 64, Streaming: true,
				InputTokens: 98, OutputTokens: 20, ReasonRatio: 0.5, ArrivalTimeUs: 400000, SendTimeUs: 400000, FirstChunkTimeUs: 431000,
				LastChunkTimeUs: 618000, Status: "ok", Instance: "instance_0"},
			{RequestID: 3, ClientID: "chat", TenantID: "t1", InputTokens: 98, OutputTokens: 20, ArrivalTimeUs: 900000, SendTimeUs: 900000,
				Status: "incomplete", ErrorMessage: "dropped: unservable"},
		}
	}
	recs := sampleRecords(ModeGenerated)
	for i := range recs {
		recs[i].Adapter = []string{"", "lora-a"}[i%2]
		recs[i].HashIDs = [][]int64{nil, {1, 2, 3}, {-9, 1 << 62}, {7}}[i]
		recs[i].FirstTokenTimeUs = recs[i].FirstChunkTimeUs
		recs[i].CachedTokens = 16 * i
		recs[i].VLLMPriority = VLLMPriority(recs[i].SLOClass)
		recs[i].XRequestID = ""
	}
	return recs
}

// readAllRecords reads every row of r without normalising.
func readAllRecords(t testing.TB, r *Reader) []Record {
	t.Helper()
	var out []Record
	for {
		var rec Record
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		out = append(out, rec)
	}
}

// readErr reads r to the end and returns the first error other than io.EOF.
func readErr(r *Reader) error {
	for {
		var rec Record
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// stdinInput is an Input reading s from "-".
func stdinInput(s string) Input { return Input{Path: "-", Stdin: strings.NewReader(s)} }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
