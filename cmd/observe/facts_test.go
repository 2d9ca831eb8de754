package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/testkit/blistest"
	"servesim/internal/tracev2"
)

// TestHeaderRecordsTheServer: observe against the fake vLLM records what the
// server says of itself as measured (version, cache config, model, context
// length), what --vllm-args says as declared (a declared value the server
// contradicts loses, with a warning), what nobody said as absent, and the
// client, with its measured peak in flight and the scheduler as scraped.
func TestHeaderRecordsTheServer(t *testing.T) {
	srv := startFake(t, fakevllm.Config{Model: "qwen3-14b", VLLMVersion: "0.11.0", BlockTokens: 32, TTFT: 30 * time.Millisecond,
		KVCapacityTokens: 32 * 2000, GPUMemoryUtilization: 0.85, MaxModelLen: 4096, MaxRunning: 3})
	prefix := filepath.Join(t.TempDir(), "cap")
	o := observeIn(testCtx(t), baseArgs(srv, "--num-requests", "12", "--rate", "400", "--max-concurrency", "4",
		"--no-self-test", "--scrape-metrics", "--scrape-interval", "5ms", "--trace-output", prefix,
		"--vllm-args", "vllm serve Qwen/Qwen3-14B --tensor-parallel-size 2 --max-num-seqs 8 --block-size 16 --trust-remote-code --no-enable-prefix-caching")...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	if !strings.Contains(o.Stderr, "the server reports block_size 32, but it was declared 16; recording the server's") {
		t.Errorf("no warning for the contradicted block size:\n%s", o.Stderr)
	}
	h := loadFiles(t, prefix).Header
	wantServer := tracev2.Server{Type: "vllm", Model: "Qwen/Qwen3-14B", TensorParallel: 2, MaxNumSeqs: 8, BlockSize: 32,
		GPUMemoryUtilization: 0.85, MaxModelLen: 4096}
	if h.Server == nil || *h.Server != wantServer {
		t.Errorf("server: got %+v, want %+v", h.Server, wantServer)
	}
	x := h.XExt
	// The server's /version is the deployment's vllm_version (it decides
	// asynchronous scheduling in the replay); enable_prefix_caching is
	// declared off, but the fake server reports it on.
	wantDep := map[string]any{"model": "Qwen/Qwen3-14B", "tensor_parallel": 2, "max_num_seqs": 8, "block_size": 32,
		"total_kv_blocks": 2000, "gpu_memory_utilization": 0.85, "max_model_len": 4096, "vllm_version": "0.11.0",
		"enable_prefix_caching": true}
	if !reflect.DeepEqual(x.Deployment, wantDep) {
		t.Errorf("x_ext.deployment:\ngot  %v\nwant %v", x.Deployment, wantDep)
	}
	for path, want := range map[string]string{
		"deployment.model": "declared", "deployment.tensor_parallel": "declared", "deployment.max_num_seqs": "declared",
		"deployment.block_size": "measured", "deployment.total_kv_blocks": "measured", "deployment.max_model_len": "measured",
		"deployment.gpu_memory_utilization": "measured", "deployment.enable_prefix_caching": "measured", "deployment.gpu": "absent", "deployment.max_num_batched_tokens": "absent",
		"server_info.vllm_version": "measured", "server_info.cache_config": "measured", "server_info.serve_args": "declared",
		"server_info.scheduler": "measured", "client.peak_in_flight": "measured", "deployment.vllm_version": "measured",
	} {
		if got := x.Sources[path]; got != want {
			t.Errorf("sources %s = %q, want %s", path, got, want)
		}
	}
	si := x.ServerInfo
	if si == nil || si.VLLMVersion != "0.11.0" || si.CacheConfig["num_gpu_blocks"] != "2000" || si.CacheConfig["engine"] != "0" ||
		!strings.Contains(si.ServeArgs, "--max-num-seqs 8") || si.Scheduler == nil || si.Scheduler.PeakRunning < 1 ||
		si.Scheduler.PeakRunning > 3 || si.Scheduler.Scrapes < 2 {
		t.Errorf("server_info: %+v scheduler %+v", si, si.Scheduler)
	}
	c := x.Client
	if c == nil || c.MaxConcurrency != 4 || c.PeakInFlight < 1 || c.PeakInFlight > 4 || c.Arrival != "constant" ||
		c.RateRPS != 400 || c.Streaming != "none" || c.SessionMode != "fixed" || c.RequestTimeoutUs != 300_000_000 {
		t.Errorf("client: %+v", c)
	}

	// replay with no flag simulates what the capture recorded.
	metrics := prefix + ".metrics.json"
	cmd := exec.Command(bins.Path(t, "replay"), prefix+".csv", "--metrics-out", metrics, "--format", "text", "--quiet")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	var m struct {
		Deployment map[string]any `json:"deployment"`
	}
	data, err := os.ReadFile(metrics)
	if err == nil {
		err = json.Unmarshal(data, &m)
	}
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"model": "Qwen/Qwen3-14B", "tensor_parallel": 2.0, "max_num_seqs": 8.0,
		"block_size": 32.0, "total_kv_blocks": 2000.0, "gpu_memory_utilization": 0.85, "max_model_len": 4096.0, "gpu": "H100"} {
		if m.Deployment[k] != want {
			t.Errorf("replayed deployment %s = %v, want %v", k, m.Deployment[k], want)
		}
	}
}

// TestHeaderMarksWhatTheServerDoesNotSay: a server without /version and
// cache_config_info leaves those facts absent; --server-config declares
// the rest; --blis-compatible-header writes a header BLIS's strict loader
// accepts, its x_ext kept in the sidecar and read back.
func TestHeaderMarksWhatTheServerDoesNotSay(t *testing.T) {
	srv := startFake(t, fakevllm.Config{NoVersion: true, NoCacheConfigInfo: true})
	dir := t.TempDir()
	conf := filepath.Join(dir, "server.yaml")
	writeFile(t, conf, "model: llama-3.1-8b-instruct\ngpu: A100-80\nmax_num_seqs: 16\n")
	prefix := filepath.Join(dir, "cap")
	o := observeIn(testCtx(t), baseArgs(srv, "--num-requests", "4", "--rate", "100", "--no-self-test", "--server-config", conf,
		"--sweep-level", "rate=100", "--trace-output", prefix, "--blis-compatible-header")...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	hb, err := os.ReadFile(prefix + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := blistest.StrictHeader(hb); err != nil {
		t.Errorf("BLIS's strict loader rejects the header: %v\n%s", err, hb)
	}
	if _, err := os.Stat(prefix + ".ext.yaml"); err != nil {
		t.Errorf("no sidecar: %v", err)
	}
	h := loadFiles(t, prefix).Header
	x := h.XExt
	if x == nil || x.Deployment["gpu"] != "A100-80" || x.Deployment["max_num_seqs"] != 16 || x.Client.SweepLevel != "rate=100" {
		t.Fatalf("x_ext from the sidecar: %+v", x)
	}
	for path, want := range map[string]string{"deployment.model": "declared", "deployment.gpu": "declared",
		"deployment.block_size": "absent", "deployment.tensor_parallel": "absent", "deployment.max_model_len": "measured",
		"server_info.vllm_version": "absent", "server_info.cache_config": "absent"} {
		if got := x.Sources[path]; got != want {
			t.Errorf("sources %s = %q, want %s", path, got, want)
		}
	}
	if x.ServerInfo != nil {
		t.Errorf("server_info from a server that said nothing: %+v", x.ServerInfo)
	}
	if h.Server.Model != "llama-3.1-8b-instruct" || h.Server.MaxNumSeqs != 16 || h.Server.BlockSize != 0 {
		t.Errorf("server: %+v", h.Server)
	}
}

// TestSingleStreamTrailerCarriesTheMeasuredClient: what only the run can
// measure (the peak in flight) reaches a single stream's trailer and reads
// back into the header.
func TestSingleStreamTrailerCarriesTheMeasuredClient(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 5 * time.Millisecond})
	o := observeIn(testCtx(t), baseArgs(srv, "--num-requests", "6", "--rate", "1000", "--max-concurrency", "3", "--no-self-test", "-o", "-")...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	if !strings.Contains(o.Stdout, "\n#+     client:\n#+         peak_in_flight: ") {
		t.Errorf("no peak in flight in the trailer:\n%s", head(o.Stdout, 3000))
	}
	x := loadStream(t, o.Stdout).Header.XExt
	if x.Client == nil || x.Client.MaxConcurrency != 3 || x.Client.PeakInFlight < 1 || x.Client.PeakInFlight > 3 ||
		x.Sources["client.peak_in_flight"] != "measured" || x.Sources["deployment.max_model_len"] != "measured" {
		t.Errorf("x_ext after the trailer: client %+v sources %v", x.Client, x.Sources)
	}
}

// TestHostileServerFactsDropped: a server that reports facts no trace can
// hold (a context of 2^63-1 tokens, a /version of markup, a block size of
// 0, negative and absurd GPU figures) has each dropped with a warning;
// the trace records none of them, and replay accepts it.
func TestHostileServerFactsDropped(t *testing.T) {
	srv := startFake(t, fakevllm.Config{Model: "fake-model"})
	target, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/version":
			fmt.Fprint(w, `{"version": "<script>alert(1)</script>"}`)
		case "/metrics":
			fmt.Fprint(w, `vllm:cache_config_info{block_size="0",num_gpu_blocks="-5",gpu_memory_utilization="7",enable_prefix_caching="True",engine="0"} 1.0`+"\n")
		case "/v1/models":
			fmt.Fprint(w, `{"data": [{"id": "fake-model", "max_model_len": 9223372036854775807}]}`)
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(hostile.Close)
	prefix := filepath.Join(t.TempDir(), "cap")
	o := observeIn(testCtx(t), "--url", hostile.URL, "--prompt-tokens", "8", "--prompt-tokens-stdev", "0", "--output-tokens", "4",
		"--output-tokens-stdev", "0", "--num-requests", "2", "--rate", "100", "--no-self-test", "--trace-output", prefix)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	for _, key := range []string{"vllm_version", "block_size", "total_kv_blocks", "gpu_memory_utilization", "max_model_len"} {
		if !strings.Contains(o.Stderr, "the server reports "+key+" ") {
			t.Errorf("no warning for %s:\n%s", key, o.Stderr)
		}
	}
	h := loadFiles(t, prefix).Header
	wantDep := map[string]any{"model": "fake-model", "enable_prefix_caching": true}
	if !reflect.DeepEqual(h.XExt.Deployment, wantDep) || h.Server.MaxModelLen != 0 || h.Server.BlockSize != 0 || h.Server.Model != "fake-model" {
		t.Errorf("deployment %v, server %+v; want %v and no block size or context length", h.XExt.Deployment, h.Server, wantDep)
	}
	if si := h.XExt.ServerInfo; si == nil || si.VLLMVersion != "" || h.XExt.Sources["server_info.vllm_version"] != "absent" {
		t.Errorf("server_info %+v, version source %q; want no version, absent", si, h.XExt.Sources["server_info.vllm_version"])
	}
	cmd := exec.Command(bins.Path(t, "replay"), prefix+".csv", "--model", "qwen3-14b", "--format", "text", "--quiet", "--metrics-out", filepath.Join(t.TempDir(), "m.json"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("replay refuses the trace: %v\n%s", err, out)
	}
}
