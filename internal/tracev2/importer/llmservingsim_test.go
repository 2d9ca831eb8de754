package importer

import (
	"bufio"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
)

const llmsSample = "testdata/llmservingsim/rtx4090"

// TestLLMServingSimSample imports 20 real requests and checks the clock tie
// by hand: bench-0 reached the engine soonest after arriving, so its send is
// t = 0; the others keep their measured distances on the engine clock.
func TestLLMServingSimSample(t *testing.T) {
	imp, err := OpenLLMServingSim(llmsSample, Options{})
	if err != nil {
		t.Fatal(err)
	}
	recs := collect(t, imp)
	if len(recs) != 20 {
		t.Fatalf("%d records, want 20", len(recs))
	}
	// Computed with Python's float arithmetic from the three first lines.
	want := []struct {
		id                         string
		arrival, send, first, last int64
		in, out                    int
	}{
		{"bench-0", 0, 0, 689435, 17570318, 2358, 531},
		{"bench-1", 265091, 386903, 689435, 25619194, 1034, 769},
		{"bench-2", 396147, 561109, 892663, 25644633, 1320, 769},
	}
	for i, w := range want {
		r := recs[i]
		got := []int64{r.RequestID, r.ArrivalTimeUs, r.SendTimeUs, r.FirstChunkTimeUs, r.LastChunkTimeUs, int64(r.InputTokens), int64(r.OutputTokens), int64(r.NumChunks)}
		exp := []int64{int64(i), w.arrival, w.send, w.first, w.last, int64(w.in), int64(w.out), int64(w.out)}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("record %d: got %v, want %v", i, got, exp)
		}
		if r.XRequestID != w.id || r.Model != "meta-llama/Llama-3.1-8B" || r.Status != "ok" || r.FinishReason != "length" ||
			!r.Streaming || r.ServerInputTokens != w.in || r.ClientID != "llmservingsim" {
			t.Errorf("record %d: %+v", i, r)
		}
	}
	h := imp.Header()
	wantServer := tracev2.Server{Type: "vllm", Model: "meta-llama/Llama-3.1-8B", TensorParallel: 1, MaxNumSeqs: 256,
		BlockSize: 16, GPUMemoryUtilization: 0.9, MaxModelLen: 32768}
	if h.Mode != tracev2.ModeReal || h.Server == nil || *h.Server != wantServer {
		t.Errorf("header: mode %q server %+v, want real %+v", h.Mode, h.Server, wantServer)
	}
	if h.CreatedAt != "2026-08-20T23:19:40.082740Z" || h.WorkloadSpec != "sharegpt-llama-3.1-8b-300-sps10.jsonl" {
		t.Errorf("header: created_at %q workload_spec %q", h.CreatedAt, h.WorkloadSpec)
	}
	if e, ok := imp.ClockTieSeconds(); !ok || math.Abs(e-(-1787240443.4220393)) > 1e-6 {
		t.Errorf("clock tie %v %v", e, ok)
	}
	// 20 of 300 requests: the count differs from meta.json's, which is said.
	if w := imp.Warnings(); len(w) != 1 || !strings.Contains(w[0], "num_requests 300") {
		t.Errorf("warnings %q", w)
	}
}

// TestLLMServingSimMeta checks both meta.json layouts.
func TestLLMServingSimMeta(t *testing.T) {
	yes := true
	tests := []struct {
		dir  string
		want LLMServingSimMeta
	}{
		{"rtx4090", LLMServingSimMeta{Model: "meta-llama/Llama-3.1-8B", VLLMVersion: "0.19.0",
			Dataset: "workloads/sharegpt-llama-3.1-8b-300-sps10.jsonl", NumRequests: 300, StartedAt: "2026-08-20T23:19:39.992496Z",
			TensorParallel: 1, DataParallel: 1, MaxNumSeqs: 256, MaxNumBatchedTokens: 2048, MaxModelLen: 32768,
			Dtype: "bfloat16", KVCacheDtype: "auto", NumGPUBlocks: 2588, BlockSize: 16, GPUMemoryUtilization: 0.9,
			PrefixCaching: &yes, AsyncScheduling: &yes, ChunkedPrefill: &yes, MaxNumPartialPrefills: 1,
			DeviceName: "NVIDIA GeForce RTX 4090", DeviceCount: 1, DeviceMemoryBytes: 25250627584}},
		{"rtxpro6000_qwen3_32b", LLMServingSimMeta{Model: "Qwen/Qwen3-32B", VLLMVersion: "0.19.0",
			Dataset: "workloads/sharegpt-qwen3-32b-300-sps10.jsonl", NumRequests: 300, StartedAt: "2026-04-25T18:49:44.514072Z",
			TensorParallel: 2, DataParallel: 1, MaxNumSeqs: 128, MaxNumBatchedTokens: 2048,
			Dtype: "bfloat16", KVCacheDtype: "auto"}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			p := filepath.Join("testdata/llmservingsim", tt.dir, "meta.json")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseLLMServingSimMeta(p, data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// TestLLMServingSimMetaErrors checks located meta.json errors.
func TestLLMServingSimMetaErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"model": "m", "engine_kwargs": {"max_num_seqs": "many"}}`, `m.json:1:50: field max_num_seqs: "many" is not a number`},
		{"{\n  \"engine_kwargs\": {\n    \"tensor_parallel_size\": 0\n  }\n}", "m.json:3:29: field tensor_parallel_size: 0 is below 1"},
		{`{"model": "m",}`, "m.json:1:15: json syntax: invalid character '}' looking for beginning of object key string"},
		{`{"model": "m"`, "m.json:1:14: json syntax: unexpected end of the file"},
		{`{"kv_cache": {"gpu_memory_utilization": 1.5}}`, "m.json:1:41: field gpu_memory_utilization: 1.5 is not in [0, 1]"},
		{`{"model": "m"} {}`, "m.json:1:16: json syntax: unexpected data after the object"},
		{`{"kv_cache": {"num_gpu_blocks": 2.5}}`, "m.json:1:33: field num_gpu_blocks: 2.5 is not a number"},
		// A list where the object is: found by FuzzLLMServingSim, it panicked.
		{"[ ]0", "m.json:1:1: a JSON array is not an object"},
		{`{"engine_kwargs": []}`, "m.json:1:19: field engine_kwargs: a JSON array is not an object"},
	}
	for _, tt := range tests {
		_, err := ParseLLMServingSimMeta("m.json", []byte(tt.in))
		var ie *Error
		if !errors.As(err, &ie) || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}

// TestLLMServingSimMalformed checks located requests.jsonl errors.
func TestLLMServingSimMalformed(t *testing.T) {
	ok := `{"request_id": "a", "input_toks": 3, "output_toks": 2, "arrival_time": 10.0, "queued_ts": 5.0, "first_token_ts": 5.5, "last_token_ts": 6.0}`
	tests := []struct{ in, want string }{
		{ok + "\n" + `{"input_toks": -1, "output_toks": 2, "arrival_time": 1}`, "r.jsonl:2:16: field input_toks: -1 is negative"},
		{`{"input_toks": 3, "output_toks": 2.5, "arrival_time": 1}`, "r.jsonl:1:34: field output_toks: 2.5 is not a whole number"},
		{`{"input_toks": 3, "output_toks": 2}`, "r.jsonl:1:35: field arrival_time: missing"},
		{`{"input_toks": 3, "output_toks": 2, "arrival_time": "noon"}`, `r.jsonl:1:53: field arrival_time: "noon" is not a number`},
		{`{"input_toks": 3, "output_toks": 2, "arrival_time": 1, "queued_ts": -4}`, "r.jsonl:1:69: field queued_ts: -4 is negative"},
		{`{"input_toks": 3, "input_toks": 3, "output_toks": 2, "arrival_time": 1}`, "r.jsonl:1:19: field input_toks: appears twice in the object"},
		{`[1, 2]`, "r.jsonl:1:1: json syntax: want an object per line, got a list"},
		{`{"input_toks": 3, "output_toks": 2, "arrival_time": 1} x`, "r.jsonl:1:56: json syntax: invalid character 'x' looking for beginning of value"},
		{`{"input_toks": 3, "output_toks": 2, "arrival_time": 1, "request_id": [1]}`, "r.jsonl:1:70: field request_id: a list is not a string or a number"},
		{`{"input_toks": 3, "output_toks": 2, "arrival_time": NaN}`, "r.jsonl:1:53: json syntax: invalid character 'N' looking for beginning of value (Python writes NaN and Infinity, which are not JSON)"},
		// first_token_ts earlier than any arrival on the engine clock.
		{ok + "\n" + `{"input_toks": 3, "output_toks": 2, "arrival_time": 11.0, "queued_ts": 6.5, "first_token_ts": 1.0}`,
			"r.jsonl:2:95: field first_token_ts: 1 is earlier on the engine clock than the first arrival (clock tie -5.000000 s)"},
	}
	for _, tt := range tests {
		imp, err := NewLLMServingSim("r.jsonl", strings.NewReader(tt.in), nil, Options{})
		for err == nil {
			_, err = imp.Next()
		}
		var ie *Error
		if !errors.As(err, &ie) || err.Error() != tt.want || ie.ExitCode() != 2 {
			t.Errorf("%s:\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}

// TestLLMServingSimMissingTimes: without queued_ts the clocks cannot be
// tied, so latencies are left unmeasured; null and 0 engine times are absent.
func TestLLMServingSimMissingTimes(t *testing.T) {
	tests := []struct {
		name, in  string
		want      [][4]int64 // arrival, send, first, last
		wantWarns int
	}{
		{"no queued_ts", `{"input_toks": 3, "output_toks": 2, "arrival_time": 100.5, "first_token_ts": 7}` + "\n" +
			`{"input_toks": 3, "output_toks": 2, "arrival_time": 100.25}`, [][4]int64{{250000, 250000, 0, 0}, {0, 0, 0, 0}}, 1},
		{"null and 0", `{"input_toks": 3, "output_toks": 2, "arrival_time": 100, "queued_ts": 7, "first_token_ts": null, "last_token_ts": 0}` + "\n\n" +
			`{"input_toks": 3, "output_toks": 2, "arrival_time": 101, "queued_ts": 8.5, "first_token_ts": 9, "last_token_ts": 9.25}`,
			[][4]int64{{0, 0, 0, 0}, {1000000, 1500000, 2000000, 2250000}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			imp, err := NewLLMServingSim("r.jsonl", strings.NewReader(tt.in), nil, Options{ClientID: "c"})
			if err != nil {
				t.Fatal(err)
			}
			recs := collect(t, imp)
			var got [][4]int64
			for _, r := range recs {
				got = append(got, [4]int64{r.ArrivalTimeUs, r.SendTimeUs, r.FirstChunkTimeUs, r.LastChunkTimeUs})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			// One warning for the missing meta.json, the others for the times.
			if w := imp.Warnings(); len(w) != tt.wantWarns+1 {
				t.Errorf("warnings %q, want %d", w, tt.wantWarns+1)
			}
		})
	}
}

// TestLLMServingSimOpen: a directory opened as a file (what `replay --from
// llmservingsim DIR` hands over), the bench's run layout with a vllm/
// subdirectory, and requests.jsonl by name all find meta.json.
func TestLLMServingSimOpen(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(filepath.Join(run, "vllm"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"requests.jsonl", "meta.json"} {
		data, err := os.ReadFile(filepath.Join(llmsSample, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, "vllm", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{llmsSample, run, filepath.Join(run, "vllm"), filepath.Join(llmsSample, "requests.jsonl")} {
		f := openFile(t, p)
		imp, err := Open(FormatLLMServingSim, p, f, Options{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		recs := collect(t, imp)
		if h := imp.Header(); len(recs) != 20 || h.Server == nil || h.Server.Model != "meta-llama/Llama-3.1-8B" {
			t.Errorf("%s: %d records, server %+v", p, len(recs), h.Server)
		}
	}
	if _, err := OpenLLMServingSim(dir, Options{}); err == nil || !strings.Contains(err.Error(), "holds no requests.jsonl") {
		t.Errorf("empty dir: %v", err)
	}
}

// TestLLMServingSimRealRuns imports the four real runs and checks the
// latencies against the vLLM column of each run's validation summary (the
// bench's own TTFT, TPOT and E2E means, ms), so the clock tie reproduces
// vLLM's definitions exactly.
func TestLLMServingSimRealRuns(t *testing.T) {
	root := shareddata.Path(t, "llmservingsim/bench/examples")
	runs := []string{"RTX4090/Llama-3.1-8B", "RTXPRO6000/Llama-3.1-8B", "RTXPRO6000/Qwen3-30B-A3B-Instruct-2507", "RTXPRO6000/Qwen3-32B"}
	for _, run := range runs {
		t.Run(run, func(t *testing.T) {
			imp, err := OpenLLMServingSim(filepath.Join(root, run), Options{})
			if err != nil {
				t.Fatal(err)
			}
			recs := collect(t, imp)
			if len(recs) != 300 || len(imp.Warnings()) != 0 {
				t.Fatalf("%d records, warnings %q", len(recs), imp.Warnings())
			}
			var ttft, tpot, e2e float64
			for _, r := range recs {
				ttft += float64(r.FirstChunkTimeUs-r.SendTimeUs) / 1e3
				e2e += float64(r.LastChunkTimeUs-r.SendTimeUs) / 1e3
				tpot += float64(r.LastChunkTimeUs-r.FirstChunkTimeUs) / 1e3 / float64(r.OutputTokens-1)
			}
			n := float64(len(recs))
			want := summaryMeans(t, filepath.Join(root, run, "validation", "summary.txt"))
			for i, got := range []float64{ttft / n, tpot / n, e2e / n} {
				if math.Abs(got-want[i]) > 0.06 {
					t.Errorf("mean %d: got %.2f ms, want %.1f ms (vLLM column)", i, got, want[i])
				}
			}
		})
	}
}

// TestCommittedCapture keeps the capture at the repository's root
// (testdata/captures/rtx4090-llama-3.1-8b.trace, the trace the README grades)
// equal to the import of the RTX 4090 run it was converted from, so the two
// cannot drift; -update rewrites it.
func TestCommittedCapture(t *testing.T) {
	run := filepath.Join(shareddata.Path(t, "llmservingsim/bench/examples"), "RTX4090", "Llama-3.1-8B")
	imp, err := OpenLLMServingSim(run, Options{ClientID: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	data, recs, err := toTrace(imp, tracev2.Columns{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 300 || imp.Header().Mode != tracev2.ModeReal {
		t.Fatalf("%d records in mode %q, want 300 in mode real", len(recs), imp.Header().Mode)
	}
	golden(t, filepath.Join("..", "..", "..", "testdata", "captures", "rtx4090-llama-3.1-8b.trace"), data)
}

// summaryMeans reads the vLLM column's TTFT, TPOT and Latency means (ms).
func summaryMeans(t *testing.T, path string) [3]float64 {
	t.Helper()
	f := openFile(t, path)
	var out [3]float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 3 || fs[1] != "Mean" {
			continue
		}
		v, err := strconv.ParseFloat(fs[2], 64)
		if err != nil {
			t.Fatalf("%s: %q", path, sc.Text())
		}
		switch fs[0] {
		case "TTFT":
			out[0] = v
		case "TPOT":
			out[1] = v
		case "Latency":
			out[2] = v
		}
	}
	return out
}
