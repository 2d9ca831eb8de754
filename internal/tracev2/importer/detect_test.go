package importer

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDetectFormats is a test per detected format: each real sample (and a
// few hand-made shapes) is named by its format and said to be sure.
func TestDetectFormats(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want Format
	}{
		{"azure code", readFile(t, "testdata/azure/AzureLLMInferenceTrace_code_head20.csv"), FormatAzure},
		{"azure conversation", readFile(t, "testdata/azure/AzureLLMInferenceTrace_conv_head20.csv"), FormatAzure},
		{"azure with CRLF and a BOM", []byte("\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03,1,2\r\n"), FormatAzure},
		{"azure columns in another order", []byte("GeneratedTokens,TIMESTAMP,ContextTokens\n"), FormatAzure},
		{"mooncake", readFile(t, "testdata/mooncake/conversation_trace_head20.jsonl"), FormatMooncake},
		{"mooncake after blank lines", []byte("\n  \n{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n"), FormatMooncake},
		{"mooncake without hash ids", []byte(`{"output_length": 1, "input_length": 5, "timestamp": 3}`), FormatMooncake},
		{"vidur", readFile(t, "testdata/vidur/azure_code_head20_vidur.csv"), FormatVidur},
		{"vidur with request ids first", readFile(t, "testdata/vidur/prefix_blocks.csv"), FormatVidur},
		{"vllm bench", readFile(t, "testdata/vllm/bench_detailed.json"), FormatVLLM},
		{"vllm bench, older release", readFile(t, "testdata/vllm/bench_detailed_old.json"), FormatVLLM},
		{"vllm bench, appended results", readFile(t, "testdata/vllm/bench_appended.json"), FormatVLLM},
		{"vllm bench, pretty-printed", []byte("{\n  \"date\": \"x\",\n  \"itls\": [[0.1, 0.2]],\n  \"input_lens\": [3]\n}\n"), FormatVLLM},
		{"llmservingsim requests", readFile(t, "testdata/llmservingsim/rtx4090/requests.jsonl"), FormatLLMServingSim},
		{"gzip azure", gzipped(t, readFile(t, "testdata/azure/AzureLLMInferenceTrace_code_head20.csv")), FormatAzure},
		{"gzip mooncake", gzipped(t, readFile(t, "testdata/mooncake/conversation_trace_head20.jsonl")), FormatMooncake},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rest, err := DetectReader(bytes.NewReader(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if got.Format != tt.want || !got.Sure || got.Why == "" {
				t.Errorf("Detect = %+v, want %s, sure, with a reason", got, tt.want)
			}
			// The reader returned yields every byte again.
			all, err := io.ReadAll(rest)
			if err != nil || !bytes.Equal(all, tt.data) {
				t.Errorf("DetectReader lost input: %d bytes back of %d (%v)", len(all), len(tt.data), err)
			}
		})
	}
}

// traceV2Inputs are TraceV2 traces in every form the repository holds, and
// hand-made headers that carry foreign-looking keys or columns.
func traceV2Inputs(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, dir := range []string{"../testdata/golden", "../testdata/blis"} {
		paths, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if ext := filepath.Ext(p); ext == ".trace" || ext == ".yaml" || (ext == ".csv" && !strings.HasSuffix(p, ".itl.csv")) {
				out[p] = readFile(t, p)
			}
		}
	}
	out["capture at the repository root"] = readFile(t, "../../../testdata/captures/rtx4090-llama-3.1-8b.trace")
	out["header with mooncake keys"] = []byte("trace_version: 3\ntimestamp: 0\ninput_length: 5\noutput_length: 1\n")
	out["mooncake keys before trace_version"] = []byte("timestamp: 0\ninput_length: 5\noutput_length: 1\ntrace_version: 3\n")
	out["header as a JSON object"] = []byte(`{"timestamp": 0, "input_length": 1, "output_length": 1, "trace_version": 3, "time_unit": "us", "mode": "real"}`)
	out["header in YAML flow style"] = []byte("{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1,\n trace_version: 3, time_unit: us, mode: real}\n")
	out["quoted trace_version key"] = []byte("input_lens: [1]\n\"trace_version\": 3\nmode: real\n")
	out["data CSV with azure's columns too"] = []byte("request_id,TIMESTAMP,ContextTokens,GeneratedTokens,arrival_time_us\n")
	out["data CSV with vidur's columns too"] = []byte("request_id,arrived_at,num_prefill_tokens,num_decode_tokens,arrival_time_us,input_tokens\n")
	out["single stream, gzip"] = gzipped(t, readFile(t, "../testdata/golden/real.trace"))
	return out
}

// TestDetectNeverMistakesTraceV2: no TraceV2 trace is taken for a foreign
// format, whatever keys or columns it also holds.
func TestDetectNeverMistakesTraceV2(t *testing.T) {
	inputs := traceV2Inputs(t)
	if len(inputs) < 20 {
		t.Fatalf("only %d TraceV2 inputs found", len(inputs))
	}
	for name, data := range inputs {
		got, _, err := DetectReader(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Format != FormatTraceV2 {
			t.Errorf("%s detected as %s (%s), want tracev2", name, got.Format, got.Why)
		}
	}
}

// TestDetectUnknown: shapes that name no format fall back to TraceV2 and
// say they are not sure, so the caller can add a hint to the error.
func TestDetectUnknown(t *testing.T) {
	for _, in := range []string{"", "\n\n", "hello world\n", "a,b,c\n1,2,3\n", "[1, 2, 3]\n",
		`["timestamp", "input_length", "output_length"]`, `{"timestamp": 0}`, "\x00\x01\xff", "\x1f\x8b\x08"} {
		got := Detect([]byte(in))
		if got.Format != FormatTraceV2 || got.Sure {
			t.Errorf("Detect(%q) = %+v, want tracev2, not sure", in, got)
		}
	}
}

func TestDetectPath(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(filepath.Join(run, "vllm"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p string, b []byte) {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(run, "vllm", "requests.jsonl"), readFile(t, "testdata/llmservingsim/rtx4090/requests.jsonl"))
	write(filepath.Join(dir, "azure.csv.gz"), gzipped(t, readFile(t, "testdata/azure/AzureLLMInferenceTrace_code_head20.csv")))
	write(filepath.Join(dir, "requests.jsonl"), []byte("\n"))
	for _, tt := range []struct {
		path string
		want Format
		sure bool
	}{
		{run, FormatLLMServingSim, true},
		{filepath.Join(run, "vllm"), FormatLLMServingSim, true},
		{filepath.Join(dir, "azure.csv.gz"), FormatAzure, true},
		{filepath.Join(dir, "requests.jsonl"), FormatLLMServingSim, true},
		{"../testdata/golden/real.yaml", FormatTraceV2, true},
	} {
		got, err := DetectPath(tt.path)
		if err != nil || got.Format != tt.want || got.Sure != tt.sure {
			t.Errorf("DetectPath(%s) = %+v, %v; want %s (sure %v)", tt.path, got, err, tt.want, tt.sure)
		}
	}
	if _, err := DetectPath(filepath.Join(dir, "nothing")); err == nil {
		t.Error("DetectPath of a missing file: no error")
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := DetectPath(empty); err == nil || !strings.Contains(err.Error(), "not an LLMServingSim run") {
		t.Errorf("DetectPath of an empty directory = %v, want an error saying it is no run", err)
	}
}

// FuzzDetectFormat: Detect never panics, and whatever package tracev2 reads
// as a trace (a single stream or data CSV from stdin, or a header) is
// detected as TraceV2.
func FuzzDetectFormat(f *testing.F) {
	for _, data := range traceV2Inputs(f) {
		f.Add(data)
	}
	for _, p := range []string{"testdata/azure/AzureLLMInferenceTrace_code_head20.csv", "testdata/mooncake/conversation_trace_head20.jsonl",
		"testdata/vidur/prefix_blocks.csv", "testdata/vllm/bench_detailed.json", "testdata/llmservingsim/rtx4090/requests.jsonl"} {
		f.Add(readFile(f, p))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := Detect(data)
		if got.Format == FormatTraceV2 {
			return
		}
		if _, err := tracev2.ReadHeader(bytes.NewReader(data), "h", tracev2.Options{}); err == nil {
			t.Fatalf("a header tracev2 reads was detected as %s: %q", got.Format, data)
		}
		r, _, err := tracev2.Open(tracev2.Input{Path: "-", Stdin: bytes.NewReader(data)}, tracev2.Options{})
		if err != nil {
			return
		}
		defer r.Close()
		var rec tracev2.Record
		for {
			err := r.Read(&rec)
			if err == io.EOF {
				t.Fatalf("a trace tracev2 reads was detected as %s: %q", got.Format, data)
			}
			if err != nil {
				return
			}
		}
	})
}
