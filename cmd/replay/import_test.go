package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/testkit/clitest"
	"servesim/internal/testkit/shareddata"
)

const importerSamples = "../../internal/tracev2/importer/testdata/"

// TestImporterSamples: the sample of every importer replays with every
// request accounted for (simulator INV-1) and one SimResult per completion.
func TestImporterSamples(t *testing.T) {
	tests := []struct {
		format, path string
		rows         float64
		hits         bool // prefix blocks shared: the cache must hit
	}{
		{"azure", "azure/AzureLLMInferenceTrace_conv_head20.csv", 20, false},
		{"azure", "azure/AzureLLMInferenceTrace_code_head20.csv", 20, false},
		{"mooncake", "mooncake/conversation_trace_head20.jsonl", 20, true},
		{"vidur", "vidur/azure_code_head20_vidur.csv", 20, false},
		{"vidur", "vidur/prefix_blocks.csv", 5, true},
		{"vllm-bench", "vllm/bench_detailed.json", 4, false},
		{"vllm-bench", "vllm/bench_detailed_old.json --model qwen3-14b", 2, false},       // its facebook/opt-125m is not embedded
		{"llmservingsim", "llmservingsim/rtx4090", 20, false},                            // a run directory
		{"llmservingsim", "llmservingsim/rtxpro6000_qwen3_32b/requests.jsonl", 5, false}, // meta.json beside it
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			dir := t.TempDir()
			mpath, spath := filepath.Join(dir, "m.json"), filepath.Join(dir, "s.json")
			args := strings.Fields(importerSamples + tt.path)
			mustReplay(t, nil, append([]string{"--from", tt.format, "--metrics-out", mpath, "--results-path", spath}, args...)...)
			b, err := os.ReadFile(mpath)
			if err != nil {
				t.Fatal(err)
			}
			m := summaryOf(t, b)
			num := func(k string) float64 { v, _ := m[k].(float64); return v }
			if got := num("injected_requests"); got != tt.rows {
				t.Errorf("injected %v, want %v", got, tt.rows)
			}
			sum := num("completed_requests") + num("still_queued") + num("still_running") + num("dropped_unservable") +
				num("timed_out_requests") + num("rejected_requests")
			if sum != num("injected_requests") {
				t.Errorf("completed+queued+running+dropped+timed out+rejected = %v, injected %v", sum, num("injected_requests"))
			}
			if got := len(readSimResults(t, spath)); float64(got) != num("completed_requests") {
				t.Errorf("%d SimResults, %v completed", got, num("completed_requests"))
			}
			if hit := num("cache_hit_rate"); tt.hits != (hit > 0) {
				t.Errorf("cache hit rate %v, want it positive: %v", hit, tt.hits)
			}
		})
	}
}

// TestDetectedImports: without --from, each importer's sample is recognised
// by its content, stderr names the format found, and the replay is the
// one --from gives, byte for byte.
func TestDetectedImports(t *testing.T) {
	for _, tt := range []struct{ format, path string }{
		{"azure", "azure/AzureLLMInferenceTrace_conv_head20.csv"},
		{"mooncake", "mooncake/conversation_trace_head20.jsonl"},
		{"vidur", "vidur/prefix_blocks.csv"},
		{"vllm-bench", "vllm/bench_detailed.json"},
		{"llmservingsim", "llmservingsim/rtx4090"},
		{"llmservingsim", "llmservingsim/rtxpro6000_qwen3_32b/requests.jsonl"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			forced := mustReplay(t, nil, "--from", tt.format, importerSamples+tt.path)
			got := replayIn(nil, importerSamples+tt.path, "--log-level", "info")
			if got.err != nil {
				t.Fatalf("replay without --from: %v\n%s", got.err, got.stderr)
			}
			if want := "format=" + tt.format; !strings.Contains(got.stderr, want) || !strings.Contains(got.stderr, "detected") {
				t.Errorf("stderr does not say %s was detected:\n%s", tt.format, got.stderr)
			}
			if got.stdout != forced.stdout || len(got.stdout) < 100 {
				t.Errorf("the detected import replays differently from --from %s", tt.format)
			}
		})
	}
	t.Run("stdin", func(t *testing.T) {
		data, err := os.ReadFile(importerSamples + "mooncake/conversation_trace_head20.jsonl")
		if err != nil {
			t.Fatal(err)
		}
		got := replayIn(bytes.NewReader(data), "-")
		if got.err != nil || !strings.Contains(got.stderr, "file=<stdin> format=mooncake") {
			t.Errorf("stdin: %v\n%s", got.err, got.stderr)
		}
		if want := mustReplay(t, bytes.NewReader(data), "--from", "mooncake", "-"); got.stdout != want.stdout || got.stdout == "" {
			t.Errorf("stdin replay (%d bytes) differs from --from mooncake - (%d bytes)", len(got.stdout), len(want.stdout))
		}
	})
	t.Run("a TraceV2 trace is read as one", func(t *testing.T) {
		got := replayIn(nil, "../../internal/tracev2/testdata/golden/real.trace", "--model", "qwen3-14b") // its acme/chat-8b is not embedded
		if got.err != nil || strings.Contains(got.stderr, "detected") {
			t.Errorf("replay of a TraceV2 trace: %v\n%s", got.err, got.stderr)
		}
	})
	t.Run("an unknown shape", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "x.csv")
		writeFile(t, path, "a,b,c\n"+strings.Repeat("1,2,3\n", 50000))
		got := replayIn(nil, path)
		msg := got.err.Error()
		if exitcode.Of(got.err) != 2 || len(msg) > 400 || !strings.Contains(msg, "--from") || !strings.Contains(msg, path+":1:1") {
			t.Errorf("error (exit %d, %d bytes) = %.500q; want exit 2, a located line under 400 bytes with a --from hint", exitcode.Of(got.err), len(msg), msg)
		}
	})
}

// TestGzipImport: a gzipped foreign trace imports like the plain one.
func TestGzipImport(t *testing.T) {
	plain, err := os.ReadFile(importerSamples + "mooncake/conversation_trace_head20.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(plain)
	zw.Close()
	path := filepath.Join(t.TempDir(), "trace.jsonl.gz")
	writeFile(t, path, z.String())
	a := mustReplay(t, nil, "--from", "mooncake", importerSamples+"mooncake/conversation_trace_head20.jsonl")
	b := mustReplay(t, nil, "--from", "mooncake", path)
	c := mustReplay(t, bytes.NewReader(z.Bytes()), "--from", "mooncake", "-")
	if a.stdout != b.stdout || a.stdout != c.stdout || len(a.stdout) < 100 {
		t.Errorf("gzip file or stdin replays differently from the plain file")
	}
}

// TestAzureCodeThroughput: the Azure 2023 code trace (8.8k requests in an
// hour) does not saturate one H100, so the simulated throughput is the
// trace's own request rate.
func TestAzureCodeThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a real trace")
	}
	path := shareddata.Path(t, "azure-llm-2023/data/AzureLLMInferenceTrace_code.csv")
	dir := t.TempDir()
	mpath, spath := filepath.Join(dir, "m.json"), filepath.Join(dir, "s.json")
	mustReplay(t, nil, "--from", "azure", path, "--metrics-out", mpath, "--results-path", spath)
	b, err := os.ReadFile(mpath)
	if err != nil {
		t.Fatal(err)
	}
	m := summaryOf(t, b)
	injected, completed := m["injected_requests"].(float64), m["completed_requests"].(float64)
	if injected < 8000 || completed != injected {
		t.Fatalf("injected %v completed %v, want every request of the trace completed", injected, completed)
	}
	// The trace starts at t = 0; the simulated duration adds only the last
	// request's latency to the trace's span.
	last := int64(0)
	for _, r := range readSimResults(t, spath) {
		last = max(last, r.ArrivalUs)
	}
	rate := m["responses_per_sec"].(float64)
	traceRate := injected / (float64(last) / 1e6)
	if rate < 0.99*traceRate || rate > traceRate {
		t.Errorf("throughput %.4f req/s, want the trace's rate %.4f within 1%%", rate, traceRate)
	}
}

// TestHelpStatesOneDefault: no flag's help states two defaults.
func TestHelpStatesOneDefault(t *testing.T) { clitest.CheckHelp(t, command()) }

// TestCompletionScripts: the bash, zsh and fish scripts name every flag.
func TestCompletionScripts(t *testing.T) { clitest.CheckCompletion(t, command()) }
