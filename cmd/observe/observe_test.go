package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/live"
	"servesim/internal/tracev2"
)

// faultCase is the fault the server injects into the n-th completion
// request (n mod len), and the row the trace must then hold.
type faultCase struct {
	fault  fakevllm.Fault
	status string
	msg    string // regexp, anchored
}

func faultCases() []faultCase {
	return []faultCase{
		{fakevllm.Fault{}, "ok", ``},
		{fakevllm.Fault{Kind: fakevllm.HTTPError, Status: 503}, "error", `HTTP 503: \{"error":\{"message":"injected fault".*`},
		{fakevllm.Fault{Kind: fakevllm.HTTPError, Status: 400, Body: "bad prompt"}, "error", `HTTP 400: bad prompt`},
		{fakevllm.Fault{Kind: fakevllm.Reset, BeforeHead: true}, "error", `HTTP error: (server closed the connection before responding|.*connection reset by peer)`},
		{fakevllm.Fault{Kind: fakevllm.Reset, AfterChunks: 3}, "error", `streaming error: .*(connection reset by peer|unexpected EOF).* \(after [0-3] chunks\)`},
		{fakevllm.Fault{Kind: fakevllm.Stall, AfterChunks: 2}, "timeout", `HTTP timeout: response not complete within 2s \(after 2 chunks\)`},
		{fakevllm.Fault{Kind: fakevllm.Stall, BeforeHead: true}, "timeout", `HTTP timeout: no response within 2s`},
		{fakevllm.Fault{Kind: fakevllm.Garbage, AfterChunks: 2}, "error", `streaming error: chunk 3: invalid JSON at byte \d+: .*`},
		{fakevllm.Fault{Kind: fakevllm.StreamError, AfterChunks: 2}, "error", `streaming error: server error in chunk 3: injected stream error`},
		{fakevllm.Fault{Kind: fakevllm.NoDone, AfterChunks: 4}, "error", `streaming error: stream ended before \[DONE\] after 4 chunks`},
	}
}

// TestEveryFaultGetsItsRow sends 30 streamed chat requests, each struck by
// one fault in turn, and checks that every request the server saw has
// exactly one row, with the status and message the fault calls for.
// The timeout is 2 s, far above the 10 ms a healthy stream takes: at
// 400 ms a loaded host (load 10 on 2 cores) timed healthy streams out.
func TestEveryFaultGetsItsRow(t *testing.T) {
	cases := faultCases()
	srv := startFake(t, fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond,
		Fault: func(n int64, _ *fakevllm.Request) fakevllm.Fault { return cases[n%int64(len(cases))].fault }})
	const n = 30
	o := observeIn(testCtx(t), baseArgs(srv, "--chat", "--streaming", "--no-self-test", "--rate", "400",
		"--num-requests", "30", "--request-timeout", "2s", "--output-tokens", "6")...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	tr := loadStream(t, o.Stdout)
	if len(tr.Records) != n {
		t.Fatalf("%d rows, want %d", len(tr.Records), n)
	}
	byUUID := map[string]*tracev2.Record{}
	ids := map[int64]bool{}
	for i := range tr.Records {
		r := &tr.Records[i]
		byUUID[r.XRequestID] = r
		if ids[r.RequestID] {
			t.Errorf("request_id %d twice", r.RequestID)
		}
		ids[r.RequestID] = true
	}
	reqs := srv.Requests()
	if len(reqs) != n {
		t.Fatalf("server saw %d requests, want %d", len(reqs), n)
	}
	for _, q := range reqs {
		c := cases[q.N%int64(len(cases))]
		r, ok := byUUID[q.Header.Get("X-Request-Id")]
		if !ok {
			t.Errorf("request %d (%v) has no row", q.N, c.fault)
			continue
		}
		if r.Status != c.status || !regexp.MustCompile(`^`+c.msg+`$`).MatchString(r.ErrorMessage) {
			t.Errorf("fault %+v: row %s %q, want %s matching %q", c.fault, r.Status, r.ErrorMessage, c.status, c.msg)
		}
		if r.SendTimeUs < 1 || r.ArrivalTimeUs < 1 || r.SendTimeUs < r.ArrivalTimeUs {
			t.Errorf("fault %+v: arrival %d send %d", c.fault, r.ArrivalTimeUs, r.SendTimeUs)
		}
		if c.status == "ok" && (r.OutputTokens != 6 || r.NumChunks != 8 || r.FinishReason != "length" ||
			r.FirstTokenTimeUs < r.FirstChunkTimeUs || r.LastChunkTimeUs < r.FirstTokenTimeUs || r.ServerInputTokens == 0) {
			t.Errorf("ok row: %+v", *r)
		}
	}
	for _, want := range []string{"Successful requests:", "Failed requests:", "Timed out requests:"} {
		if !strings.Contains(o.Stderr, want) {
			t.Errorf("summary lacks %q:\n%s", want, o.Stderr)
		}
	}
}

// TestTraceFields checks a two-file run with warm-up, SLO classes, ITL, the
// metrics series and the summary on stdout: the header, the optional
// columns, ids from the warm-up count, the companion files, and that the
// API key is written nowhere.
func TestTraceFields(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond, Model: "acme/chat-8b",
		ReportCachedTokens: true, MaxModelLen: 4096})
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	writeFile(t, spec, `version: "2"
seed: 7
aggregate_rate: 200
num_requests: 12
goodput_slo_targets:
  critical: {ttft_ms: 250, e2e_ms: 2000}
  batch: {ttft_ms: 1500.2}
clients:
  - id: web
    tenant_id: acme
    slo_class: critical
    rate_fraction: 0.5
    streaming: true
    prefix_group: sys
    prefix_length: 64
    slo_target_us: 250000
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 20}}
    output_distribution: {type: constant, params: {value: 5}}
  - id: bulk
    tenant_id: beta
    slo_class: batch
    rate_fraction: 0.5
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 30}}
    output_distribution: {type: constant, params: {value: 3}}
`)
	prefix := filepath.Join(dir, "cap")
	const key = "sk-secret-key-never-written"
	o := observeIn(testCtx(t), "--url", srv.URL(), "--quiet", "--workload-spec", spec, "--api-key", key,
		"--warmup-requests", "3", "--prewarm", "4", "--record-itl", "--scrape-metrics", "--scrape-interval", "20ms",
		"--trace-output", prefix, "--trace-ext", "--summary", "--goodput", "ttft:250,e2el:2000", "--self-test-streams", "20")
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	tr := loadFiles(t, prefix)
	h := tr.Header
	if h.Mode != "real" || h.WarmUpRequests != 3 || *h.WorkloadSeed != 7 || h.WorkloadSpec != spec ||
		h.Server == nil || h.Server.Model != "acme/chat-8b" || h.Server.MaxModelLen != 4096 || h.Network == nil ||
		h.GoodputSLOTargets["critical"].TTFTMs != 250 {
		t.Errorf("header: %+v server %+v network %+v", *h, h.Server, h.Network)
	}
	created, err := time.Parse(time.RFC3339Nano, h.CreatedAt)
	if err != nil || h.XExt == nil || created.UnixMicro() != h.XExt.T0UnixUs {
		t.Errorf("created_at %q vs x_ext %+v: %v", h.CreatedAt, h.XExt, err)
	}
	if x := h.XExt; x.Interrupted == nil || *x.Interrupted || x.TimeOrigin != "relative" || x.Loop != "open" ||
		x.SelfTest == nil || x.SelfTest.Streams != 20 || x.SelfTest.TTFTUs != 20000 {
		t.Errorf("x_ext: %+v self-test %+v", *x, x.SelfTest)
	}
	if kv := h.ObservedKVMetrics; kv == nil || kv.Source != "gpu-prefix-cache-fallback" || kv.BlockQueries <= 0 || kv.BlockHits <= 0 || kv.HitRate <= 0 {
		t.Errorf("observed_kv_metrics: %+v", kv)
	}
	cols := tr.Columns
	if !cols.VLLMPriority || !cols.SLOTarget || !cols.XRequestID || !cols.FirstTokenTime || !cols.CachedTokens || cols.ThinkTime {
		t.Errorf("columns: %+v", cols)
	}
	if len(tr.Records) != 12 {
		t.Fatalf("%d rows, want 12", len(tr.Records))
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[int64]bool{}
	chunks := map[int64]int{}
	for _, r := range tr.Records {
		seen[r.RequestID] = true
		chunks[r.RequestID] = r.NumChunks
		if r.Status != "ok" || !uuid.MatchString(r.XRequestID) || !r.Streaming || r.Model != "" {
			t.Errorf("row %d: %s %q uuid %q streaming %v model %q", r.RequestID, r.Status, r.ErrorMessage, r.XRequestID, r.Streaming, r.Model)
		}
		wantPrio, wantIn, wantOut := 0, 20, 5
		if r.ClientID == "bulk" {
			wantPrio, wantIn, wantOut = 5, 30, 3
		}
		if r.VLLMPriority != wantPrio || r.InputTokens != wantIn || r.OutputTokens != wantOut {
			t.Errorf("row %d (%s): priority %d input %d output %d", r.RequestID, r.ClientID, r.VLLMPriority, r.InputTokens, r.OutputTokens)
		}
		if r.ClientID == "web" && (r.PrefixGroup != "sys" || r.PrefixLength != 64 || r.SLOTargetUs != 250000 || r.TenantID != "acme") {
			t.Errorf("web row: %+v", r)
		}
	}
	for id := int64(3); id < 15; id++ {
		if !seen[id] {
			t.Errorf("request_id %d missing: ids must run from the warm-up count 3", id)
		}
	}
	// The server saw the warm-up requests and the run's, with the headers
	// and priorities of docs/workload.md §10.
	reqs := srv.Requests()
	if len(reqs) != 15 {
		t.Errorf("server saw %d completion requests, want 3 warm-up + 12", len(reqs))
	}
	for _, q := range reqs[3:] {
		obj := q.Header.Get("X-Gateway-Inference-Objective")
		if (obj != "critical" && obj != "batch") || q.Priority == nil || q.Header.Get("Authorization") != "Bearer "+key ||
			q.MaxTokens != q.MinTokens {
			t.Errorf("request %d: objective %q priority %v auth %q max %d min %d", q.N, obj, q.Priority,
				q.Header.Get("Authorization"), q.MaxTokens, q.MinTokens)
		}
		// The request's own target (slo_target_us), else its class's
		// goodput TTFT target, rounded up to whole ms.
		if want := map[string]string{"critical": "250", "batch": "1501"}[obj]; q.Header.Get("X-Slo-Ttft-Ms") != want {
			t.Errorf("%s: x-slo-ttft-ms %q, want %q", obj, q.Header.Get("X-Slo-Ttft-Ms"), want)
		}
	}
	// ITL: every chunk of every ok streamed row.
	itl, err := tracev2.ReadITL(mustOpen(t, prefix+".itl.csv"), "itl", tracev2.Origin{})
	if err != nil {
		t.Fatal(err)
	}
	perReq := map[int64]int{}
	for _, row := range itl {
		perReq[row.RequestID]++
	}
	for id, n := range chunks {
		if perReq[id] != n {
			t.Errorf("request %d: %d ITL rows, want num_chunks %d", id, perReq[id], n)
		}
	}
	// The /metrics series: before, during (maybe), after.
	rows, err := csv.NewReader(mustOpen(t, prefix+".metrics.csv")).ReadAll()
	if err != nil || len(rows) < 3 || strings.Join(rows[0], ",") != strings.Join(live.MetricsColumns(), ",") ||
		rows[1][1] != "before" || rows[len(rows)-1][1] != "after" {
		t.Errorf("metrics series: %v %v", rows, err)
	}
	for _, want := range []string{`Successful requests:\s+12\n`, `Request goodput \(req/s\):\s+\d`, `Mean TTFT \(ms\):\s+\d`,
		`P99 ITL \(ms\):`, `Median E2EL from intended \(ms\):`, `Dropped requests \(never sent\):\s+0\n`} {
		if !regexp.MustCompile(want).MatchString(o.Stdout) {
			t.Errorf("summary on stdout lacks %q:\n%s", want, o.Stdout)
		}
	}
	for _, f := range []string{prefix + ".yaml", prefix + ".csv", prefix + ".itl.csv", prefix + ".metrics.csv"} {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), key) {
			t.Errorf("%s contains the API key", f)
		}
	}
	if strings.Contains(o.Stdout+o.Stderr, key) {
		t.Error("the API key appears on stdout or stderr")
	}
}

// TestUsageErrors: bad flags exit 2 before any request.
func TestUsageErrors(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	badConf := filepath.Join(t.TempDir(), "s.yaml")
	writeFile(t, badConf, "max_num_sequences: 3\n")
	fracConf := filepath.Join(t.TempDir(), "f.yaml")
	writeFile(t, fracConf, "tensor_parallel: 1.99\n")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "1"}, "--server-url is required"},
		{[]string{"--url", srv.URL(), "--summary"}, "--summary puts the summary on stdout"},
		{[]string{"--url", srv.URL(), "--goodput", "ttft:x"}, "--goodput"},
		{[]string{"--url", srv.URL(), "--goodput", "itl:5"}, "unknown metric"},
		{[]string{"--url", srv.URL(), "--header", "nocolon"}, "--header"},
		{[]string{"--url", srv.URL(), "--record-itl"}, "--itl-output"},
		{[]string{"--url", srv.URL(), "--max-concurrency", "-1"}, "--max-concurrency"},
		{[]string{"--url", srv.URL(), "--duration", "-1s"}, "--duration"},
		{[]string{"--url", srv.URL(), "--self-test", "--no-self-test"}, "exclude"},
		{[]string{"--url", srv.URL(), "--workload", "chatbot"}, "needs --rate"},
		{[]string{"--url", srv.URL(), "stray"}, "too many arguments"},
		{[]string{"--url", "ftp://x", "--no-self-test"}, "--server-url"},
		{[]string{"--url", srv.URL(), "--trace-output", "/nonexistent/dir/cap"}, "does not exist"},
		{[]string{"--url", srv.URL(), "--trace-output", "x", "--record-itl", "--itl-output", "x.csv"}, "both write"},
		{[]string{"--url", srv.URL(), "--server-config", badConf}, `s.yaml:1:1: unknown key "max_num_sequences"`},
		{[]string{"--url", srv.URL(), "--server-config", "/nonexistent/s.yaml"}, "no such file"},
		{[]string{"--url", srv.URL(), "--server-config", fracConf}, `f.yaml:1:18: key tensor_parallel: "1.99" is not an integer`},
		{[]string{"--url", srv.URL(), "--server-config", "/dev/zero"}, "/dev/zero: larger than 16 MiB, the bound on this input"},
		{[]string{"--url", srv.URL(), "--vllm-args", "--tensor-parallel-size two"}, `--vllm-args: --tensor-parallel-size: "two" is not a count`},
	}
	for _, tc := range tests {
		o := observeIn(testCtx(t), tc.args...)
		if o.Code != 2 || o.Err == nil || !strings.Contains(o.Err.Error(), tc.want) {
			t.Errorf("%v: exit %d %v, want 2 with %q", tc.args, o.Code, o.Err, tc.want)
		}
		if o.Stdout != "" {
			t.Errorf("%v: stdout %q", tc.args, head(o.Stdout, 200))
		}
	}
	if n := srv.Stats().Requests; n != 0 {
		t.Errorf("usage errors sent %d requests", n)
	}
}

// TestHelpHasAPipelineExample: --help shows a real pipeline.
func TestHelpHasAPipelineExample(t *testing.T) {
	o := observeIn(testCtx(t), "--help")
	for _, want := range []string{"observe --url http://127.0.0.1:8000", "| tee cap.trace | replay -", "calibrate cap.csv sim.json", "--max-concurrency"} {
		if !strings.Contains(o.Stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
