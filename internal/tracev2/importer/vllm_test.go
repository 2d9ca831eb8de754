package importer

import (
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/testkit/shareddata"
	"servesim/internal/tracev2"
)

// No real `vllm bench serve --save-detailed` result is in ../shared/data; this
// test runs when one is added there as vllm-bench/result.json and otherwise
// skips, saying so.
func TestVLLMRealSample(t *testing.T) {
	path := shareddata.Path(t, "vllm-bench/result.json")
	imp, err := NewVLLM(path, openFile(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if recs := collect(t, imp); len(recs) == 0 {
		t.Error("no records")
	}
}

// Expected values worked out by hand from bench_detailed.json:
// t0 = min(start − queue) = 1000.25 s.
//
//	#0 start 1000.25: arrival = send = 0; first = 0.051234 s; last = first + (0.087534 − 0.051234) s.
//	#1 start 1000.75: arrival = send = 0.5 s; first = +0.038 s; last = first + 0.0238 s.
//	#2 failed (traceback), start 1001.1: arrival = send = 0.85 s, no chunks.
//	#3 start 1001.3, queued 0.2 s: arrival 0.85 s, send 1.05 s; first +0.0421 s; last = first + 0.0125 s.
func TestVLLMNewLayout(t *testing.T) {
	path := "testdata/vllm/bench_detailed.json"
	imp, err := NewVLLM(path, openFile(t, path), Options{})
	if err != nil {
		t.Fatal(err)
	}
	const c = "vllm-bench"
	want := []tracev2.Record{
		{RequestID: 0, ClientID: c, Streaming: true, InputTokens: 512, OutputTokens: 4, Status: "ok",
			ArrivalTimeUs: 0, SendTimeUs: 0, FirstChunkTimeUs: 51234, LastChunkTimeUs: 87534, NumChunks: 4},
		{RequestID: 1, ClientID: c, Streaming: true, InputTokens: 230, OutputTokens: 3, Status: "ok",
			ArrivalTimeUs: 500000, SendTimeUs: 500000, FirstChunkTimeUs: 538000, LastChunkTimeUs: 561800, NumChunks: 3},
		{RequestID: 2, ClientID: c, Streaming: true, InputTokens: 1024, OutputTokens: 0, Status: "error",
			ErrorMessage:  "aiohttp.client_exceptions.ServerDisconnectedError: Server disconnected",
			ArrivalTimeUs: 850000, SendTimeUs: 850000},
		{RequestID: 3, ClientID: c, Streaming: true, InputTokens: 77, OutputTokens: 2, Status: "ok",
			ArrivalTimeUs: 850000, SendTimeUs: 1050000, FirstChunkTimeUs: 1092100, LastChunkTimeUs: 1104600, NumChunks: 2},
	}
	if got := collect(t, imp); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n %+v\nwant\n %+v", got, want)
	}
	h := imp.Header()
	if h.Server == nil || h.Server.Type != "vllm" || h.Server.Model != "meta-llama/Llama-3.1-8B-Instruct" || h.Mode != "real" || h.CreatedAt != "" {
		t.Errorf("header = %+v", h)
	}
	if w := imp.Warnings(); len(w) != 0 {
		t.Errorf("warnings = %q, want none", w)
	}
}

// The older layout has no start_times, queue_times or latencies: arrivals are
// unknown (0) and the last chunk is first + Σitl.
func TestVLLMOldLayout(t *testing.T) {
	path := "testdata/vllm/bench_detailed_old.json"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A plain io.Reader (no ReaderAt) exercises the in-memory fallback.
	imp, err := NewVLLM(path, io.MultiReader(strings.NewReader(string(data))), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []tracev2.Record{
		{RequestID: 0, ClientID: "vllm-bench", Streaming: true, InputTokens: 100, OutputTokens: 10, Status: "ok",
			FirstChunkTimeUs: 20000, LastChunkTimeUs: 110000, NumChunks: 10},
		{RequestID: 1, ClientID: "vllm-bench", Streaming: true, InputTokens: 200, OutputTokens: 0, Status: "error",
			ErrorMessage: "Internal Server Error"},
	}
	if got := collect(t, imp); !reflect.DeepEqual(got, want) {
		t.Errorf("got\n %+v\nwant\n %+v", got, want)
	}
	wantWarn := []string{path + ": no start_times (vllm releases before 0.10 do not save them): arrival times are unknown and set to 0"}
	if got := imp.Warnings(); !reflect.DeepEqual(got, wantWarn) {
		t.Errorf("warnings = %q, want %q", got, wantWarn)
	}
	if h := imp.Header(); h.Server == nil || h.Server.Model != "facebook/opt-125m" {
		t.Errorf("server = %+v, want model facebook/opt-125m", h.Server)
	}
}

func TestVLLMAppendedRuns(t *testing.T) {
	path := "testdata/vllm/bench_appended.json"
	for _, tt := range []struct {
		run    int
		client string
		inputs []int
	}{{0, "run-a", []int{100, 200}}, {1, "run-b", []int{111, 222}}} {
		imp, err := NewVLLM(path, openFile(t, path), Options{Run: tt.run})
		if err != nil {
			t.Fatal(err)
		}
		recs := collect(t, imp)
		var inputs []int
		for _, r := range recs {
			inputs = append(inputs, r.InputTokens)
			if r.ClientID != tt.client {
				t.Errorf("run %d: client %q, want %q (the result's label)", tt.run, r.ClientID, tt.client)
			}
		}
		if !reflect.DeepEqual(inputs, tt.inputs) {
			t.Errorf("run %d: input tokens %v, want %v", tt.run, inputs, tt.inputs)
		}
		want := path + ": 2 appended result objects; imported object " + string(rune('0'+tt.run))
		if w := imp.Warnings(); len(w) != 2 || w[1] != want {
			t.Errorf("run %d: warnings %q, want [no start_times..., %q]", tt.run, w, want)
		}
	}
}

func TestCleanError(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"Bad Request", "Bad Request"},
		{"Traceback (most recent call last):\n  File \"x\"\nValueError: boom\n\n", "ValueError: boom"},
		{strings.Repeat("é", 200), strings.Repeat("é", 150)},
	}
	for _, tt := range tests {
		if got := cleanError(tt.in); got != tt.want {
			t.Errorf("cleanError(%.20q) = %.40q, want %.40q", tt.in, got, tt.want)
		}
	}
}
