package live

import (
	"bytes"
	"flag"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"servesim/internal/fanout"
	"servesim/internal/httpload"
	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2/playback"
	"servesim/internal/workload"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestParseGoodput(t *testing.T) {
	tests := []struct {
		in      string
		want    goodput
		wantErr bool
	}{
		{"", goodput{}, false},
		{"ttft:500", goodput{ttftMs: 500}, false},
		{"ttft:500,tpot:50,e2el:5000", goodput{500, 50, 5000}, false},
		{"ttft:500 tpot:12.5", goodput{ttftMs: 500, tpotMs: 12.5}, false},
		{"TTFT:1", goodput{ttftMs: 1}, false},
		{"itl:5", goodput{}, true},
		{"ttft", goodput{}, true},
		{"ttft:-1", goodput{}, true},
		{"ttft:NaN", goodput{}, true},
		{",", goodput{}, true},
	}
	for _, tc := range tests {
		got, err := parseGoodput(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("parseGoodput(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestParseHeaders(t *testing.T) {
	tests := []struct {
		in      []string
		want    map[string]string
		wantErr bool
	}{
		{[]string{"X-A: 1", "x-b:two words "}, map[string]string{"X-A": "1", "X-B": "two words"}, false},
		{[]string{"Authorization: Bearer k:v"}, map[string]string{"Authorization": "Bearer k:v"}, false},
		{[]string{"novalue"}, nil, true},
		{[]string{": v"}, nil, true},
		{[]string{"bad name: v"}, nil, true},
	}
	for _, tc := range tests {
		got, err := parseHeaders(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseHeaders(%q): error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		for k, v := range tc.want {
			if got.Get(k) != v {
				t.Errorf("parseHeaders(%q)[%s] = %q, want %q", tc.in, k, got.Get(k), v)
			}
		}
	}
}

func TestNewUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		u := newUUID()
		if !re.MatchString(u) || seen[u] {
			t.Fatalf("uuid %q: not v4 or repeated", u)
		}
		seen[u] = true
	}
}

func TestTextChunks(t *testing.T) {
	tests := []struct {
		name string
		r    httpload.Result
		want []int64
	}{
		{"chat: role, 3 tokens, usage", httpload.Result{FirstTokenUS: 20, FirstTokenChunk: 1, TextChunks: 3, ChunkUS: []int64{20, 20, 30, 40, 41}}, []int64{20, 30, 40}},
		{"completions: 2 tokens, usage", httpload.Result{FirstTokenUS: 5, TextChunks: 2, ChunkUS: []int64{5, 9, 10}}, []int64{5, 9}},
		{"index out of range", httpload.Result{FirstTokenUS: 5, FirstTokenChunk: 3, TextChunks: 2, ChunkUS: []int64{5, 9, 10}}, nil},
		{"no token", httpload.Result{ChunkUS: []int64{5}}, nil},
		{"not streamed", httpload.Result{FirstTokenUS: 5, TextChunks: 1}, nil},
	}
	for _, tc := range tests {
		got := textChunks(&tc.r)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestSummaryGolden locks the summary's layout and figures for fixed
// results: three completed streams, one HTTP error, one never sent.
func TestSummaryGolden(t *testing.T) {
	tal := newTally(goodput{ttftMs: 45, tpotMs: 11})
	ok := func(id, intended, send int64, gap int64, tokens int) httpload.Result {
		first := send + 40_000 + id*5_000
		chunks := []int64{first, first} // the role chunk, then the first token
		for k := 1; k < tokens; k++ {
			chunks = append(chunks, chunks[k]+gap)
		}
		last := chunks[len(chunks)-1]
		chunks = append(chunks, last) // the usage chunk
		return httpload.Result{Job: httpload.Job{ID: id, IntendedUS: intended, Stream: true}, SendUS: send, FirstChunkUS: first,
			FirstTokenUS: first, FirstTokenChunk: 1, LastChunkUS: last, DoneUS: last, NumChunks: len(chunks), TextChunks: tokens, ChunkUS: chunks,
			PromptTokens: 100, CompletionTokens: tokens, HasUsage: true, Status: httpload.StatusOK}
	}
	for _, r := range []httpload.Result{
		ok(0, 1000, 1100, 10_000, 5),
		ok(1, 2000, 4500, 12_000, 4),
		ok(2, 3000, 3050, 9_000, 6),
		{Job: httpload.Job{ID: 3, IntendedUS: 4000}, SendUS: 4100, DoneUS: 9000, Status: httpload.StatusError, Error: "HTTP 503: busy"},
		{Job: httpload.Job{ID: 4, IntendedUS: 5000}, DoneUS: 5000, Status: httpload.StatusTimeout, Error: "HTTP timeout: deadline passed"},
	} {
		tal.add(&r)
	}
	var b bytes.Buffer
	if err := tal.write(&b, summaryInfo{maxConcurrency: 8}); err != nil {
		t.Fatal(err)
	}
	clitest.Golden(t, *update, "summary.golden", b.String())
}

// TestSummaryNotStreamed: responses sent whole have no per-token timing;
// the summary says TPOT and ITL were not measured instead of 0.00 ms.
func TestSummaryNotStreamed(t *testing.T) {
	tal := newTally(goodput{})
	for id := range int64(3) {
		send, done := 1000+id*500, 300_000+id*1000
		r := httpload.Result{Job: httpload.Job{ID: id, IntendedUS: send}, SendUS: send, FirstChunkUS: done,
			FirstTokenUS: done, LastChunkUS: done, DoneUS: done, NumChunks: 1, TextChunks: 1,
			PromptTokens: 100, CompletionTokens: 50, HasUsage: true, Status: httpload.StatusOK}
		tal.add(&r)
	}
	var b bytes.Buffer
	if err := tal.write(&b, summaryInfo{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, m := range []string{"TPOT", "ITL"} {
		for _, s := range []string{"Mean", "Median", "P99"} {
			if !regexp.MustCompile(`(?m)^` + s + ` ` + m + ` \(ms\):\s+not measured$`).MatchString(out) {
				t.Errorf("%s %s is not said to be not measured:\n%s", s, m, out)
			}
		}
	}
	if !regexp.MustCompile(`(?m)^Mean E2EL \(ms\):\s+29[0-9]\.\d\d$`).MatchString(out) {
		t.Errorf("E2EL must still be measured:\n%s", out)
	}
}

func TestParseServeArgs(t *testing.T) {
	tests := []struct {
		line string
		want map[string]any
		err  string
	}{
		{`vllm serve Qwen/Qwen3-14B --tensor-parallel-size=4 -pp 2 --max-num-seqs 64 --max-model-len 32k --gpu-memory-utilization 0.92`,
			map[string]any{"model": "Qwen/Qwen3-14B", "tensor_parallel": 4, "pipeline_parallel": 2, "max_num_seqs": 64,
				"max_model_len": 32000, "gpu_memory_utilization": 0.92}, ""},
		{`--model 'my model' --max-num-batched-tokens 8K --scheduling-policy priority --no-enable-prefix-caching --async-scheduling`,
			map[string]any{"model": "my model", "max_num_batched_tokens": 8192, "scheduler": "priority-fcfs",
				"enable_prefix_caching": false, "async_scheduling": true}, ""},
		{`serve m --trust-remote-code --served-model-name x --num-gpu-blocks-override 100 --enable-chunked-prefill=false`,
			map[string]any{"model": "m", "total_kv_blocks": 100, "enable_chunked_prefill": false}, ""},
		{`VLLM_API_KEY=sk-abc HF_TOKEN=hf_x env CUDA_VISIBLE_DEVICES=0 vllm serve Qwen/Qwen3-14B --api-key k --max-num-seqs 8`,
			map[string]any{"model": "Qwen/Qwen3-14B", "max_num_seqs": 8}, ""},
		// a switch vLLM knows takes no value: the model after it is the model
		{`vllm serve --trust-remote-code Qwen/Qwen3-14B --enable-lora --dtype bfloat16 --tp 2`,
			map[string]any{"model": "Qwen/Qwen3-14B", "tensor_parallel": 2}, ""},
		{`--max-num-seqs lots`, nil, `--max-num-seqs: "lots" is not a count`},
		{`--max-num-seqs`, nil, `--max-num-seqs needs a value`},
		{`--scheduling-policy lifo`, nil, `--scheduling-policy: "lifo" is not fcfs or priority`},
		{`--model "unterminated`, nil, `unterminated quote or escape`},
	}
	for _, tc := range tests {
		got, err := parseServeArgs(tc.line)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("parseServeArgs(%q): error %v, want %s", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseServeArgs(%q):\ngot  %v, %v\nwant %v", tc.line, got, err, tc.want)
		}
	}
	if _, err := parseServeArgs(strings.Repeat("x", maxServeArgsBytes+1)); err == nil {
		t.Error("an over-long command line: no error")
	}
}

// BenchmarkPlanJob is the dispatcher-side cost of one request: the next
// workload request (chatbot preset: ~256 prompt tokens), its job (UUID,
// trace fields) and its prepared body (prompt text and JSON).
func BenchmarkPlanJob(b *testing.B) {
	rate, n := 1000.0, int64(0)
	wl, err := workload.Resolve(workload.Options{Preset: "chatbot", Rate: &rate, NumRequests: &n, Horizon: ptr(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	p, _ := httpload.NewPrompter(42, 1.0)
	c, _ := httpload.NewClient(httpload.Config{BaseURL: "http://127.0.0.1:1", Prompter: p})
	pl := newSpecPlanner(wl, p, &config{}, 0, fanout.Shard{})
	b.ReportAllocs()
	for b.Loop() {
		r, ok := pl.src.Next()
		if !ok {
			b.Fatal("workload ended")
		}
		j := pl.job(r)
		_ = c.Prepare(j)
		pl.take(j.ID)
	}
}

// TestPyFloat: floats are written as Python's json.dump writes them.
func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{200: "200.0", 0: "0.0", 0.5: "0.5", 9.9e-05: "9.9e-05", 0.0001: "0.0001",
		1e16: "1e+16", 123456.789: "123456.789", -3: "-3.0", 1.0 / 3: "0.3333333333333333"} {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", f, got, want)
		}
	}
}

// TestOverSaturated judges samples without a clock (100 ms apart): a
// backlog that grows at each of the last three samples, faster than the
// level completes, while its completions no longer rise (they came at the
// same pace in the three samples before), by ≥ 10% of the offered rate, to
// ≥ 16 requests behind.
func TestOverSaturated(t *testing.T) {
	type pt = satSample
	for _, tc := range []struct {
		name    string
		rate    float64
		samples []satSample
		want    bool
	}{
		{"capped: completes 2/sample, grows 8", 100, []pt{{0, 0}, {8, 2}, {16, 4}, {24, 6}, {32, 8}, {40, 10}, {48, 12}}, true},
		{"unlimited, long requests: ramp before the first completion", 100,
			[]pt{{10, 0}, {20, 0}, {30, 0}, {40, 0}, {50, 0}, {60, 0}, {70, 0}}, false},
		{"unlimited: completions start", 100, []pt{{30, 0}, {40, 0}, {50, 0}, {60, 0}, {69, 1}, {75, 5}, {80, 15}}, false},
		{"unlimited: steady", 100, []pt{{70, 0}, {70, 10}, {70, 20}, {70, 30}, {70, 40}, {70, 50}, {71, 60}}, false},
		{"grows as fast as it completes", 100, []pt{{0, 0}, {5, 5}, {10, 10}, {15, 15}, {20, 20}, {25, 25}, {30, 30}}, false},
		{"growth below 10% of the rate", 1000, []pt{{30, 0}, {31, 0}, {31, 0}, {31, 0}, {32, 0}, {33, 0}, {34, 0}}, false},
		{"only 4 behind", 100, []pt{{0, 0}, {1, 0}, {1, 0}, {1, 1}, {2, 1}, {3, 1}, {4, 1}}, false},
		{"one step back", 100, []pt{{0, 0}, {8, 2}, {16, 4}, {24, 6}, {32, 8}, {31, 10}, {48, 12}}, false},
		{"too few samples", 100, []pt{{8, 2}, {16, 4}, {24, 6}, {32, 8}}, false},
	} {
		m := &saturation{rate: tc.rate, period: 100 * time.Millisecond}
		if why, got := m.overSaturated(tc.samples); got != tc.want {
			t.Errorf("%s: over-saturated %v (%q), want %v", tc.name, got, why, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestPlayWindow: reading stops at the first row that arrives more than
// the slack after the window's end: the limit-th earliest arrival after
// the offset, or the duration's end scaled to trace time; the slack is
// twice the rows' disorder so far, at least minSlackUs.
func TestPlayWindow(t *testing.T) {
	s := minSlackUs
	for _, tc := range []struct {
		name     string
		o        playOptions
		arrivals []int64
		stopAt   int // index of the first row past the window; -1 = none
	}{
		{"limit", playOptions{limit: 3}, []int64{50, 10, 30, 20, 40, 30 + s, 30 + s + 1}, 6},
		{"limit, a late early row lowers the end", playOptions{limit: 2}, []int64{100, 200, 0, 100 + s + 1}, 3},
		{"offset", playOptions{limit: 1, offset: time.Microsecond * 100}, []int64{0, 100, 100 + s, 100 + s + 1}, 3},
		{"duration at half speed", playOptions{horizonUs: 1000, rule: playback.Rule{TimeScale: 0.5}}, []int64{0, 2000 + s, 2000 + s + 1}, 2},
		{"no window", playOptions{rule: playback.Rule{TimeScale: 1}}, []int64{0, 1 << 60}, -1},
		{"disordered rows widen the slack", playOptions{limit: 1}, []int64{2 * s, 0, 2*s + 1, 4 * s, 4*s + 1}, 4},
	} {
		if tc.o.rule.TimeScale == 0 {
			tc.o.rule.TimeScale = 1
		}
		w := newPlayWindow(tc.o)
		got := -1
		for i, a := range tc.arrivals {
			if w.past(a) {
				got = i
				break
			}
		}
		if got != tc.stopAt {
			t.Errorf("%s: stopped at row %d, want %d", tc.name, got, tc.stopAt)
		}
	}
}
