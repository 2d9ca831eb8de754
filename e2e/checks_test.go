package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/montanaflynn/stats"

	"servesim/internal/tracev2"
)

// chunkOverhead is how many SSE data events Ollama sends besides one per
// token on /v1/completions and /v1/chat/completions with usage: an empty
// finish-only chunk and the usage-only chunk (choices: []).
const chunkOverhead = 2

// testQuirks pins down the server behaviour observe must cope with, and
// checks that it does.
func testQuirks(t *testing.T, s setup, srv *ollama) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		method, path, body string
		want               int
	}{
		{"GET", "/metrics", "", 404},
		{"POST", "/tokenize", `{"prompt":"abc"}`, 404},
		{"POST", "/v1/completions", `{"model":"no-such-model","prompt":"abc","max_tokens":2}`, 404},
	} {
		var code int
		var err error
		if tc.method == "GET" {
			code, _, err = srv.get(ctx, tc.path)
		} else {
			code, _, err = srv.post(ctx, tc.path, tc.body)
		}
		if err != nil || code != tc.want {
			t.Errorf("%s %s = %d (%v), want %d", tc.method, tc.path, code, err, tc.want)
		}
	}

	// Streamed usage: zero in every chunk but the last, which has no choices.
	chunks := rawStream(t, ctx, srv.url(), `{"model":"`+modelName+`","prompt":"hello","max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`)
	if got, want := len(chunks), 5+chunkOverhead; got != want {
		t.Fatalf("streamed chunks = %d, want %d", got, want)
	}
	for i, c := range chunks {
		last := i == len(chunks)-1
		if got := c.Usage.PromptTokens > 0; got != last {
			t.Errorf("chunk %d: usage.prompt_tokens %d (last chunk: %v)", i, c.Usage.PromptTokens, last)
		}
		if last && (len(c.Choices) != 0 || c.Usage.CompletionTokens != 5 || c.Usage.PromptTokens != 5) {
			t.Errorf("last chunk: %d choices, usage %+v; want no choices, 5 prompt and 5 completion tokens", len(c.Choices), c.Usage)
		}
	}

	// An unknown model: observe stops before the run, naming the cause.
	_, exit := s.tool(t, time.Minute, "unknown-model.observe.log", "observe", "--url", srv.url(), "--model", "no-such-model",
		"-n", "2", "--concurrency", "1", "--no-self-test", "--quiet", "--trace-output", filepath.Join(s.out, "unknown-model"))
	log, _ := os.ReadFile(filepath.Join(s.out, "unknown-model.observe.log"))
	if exit != 1 || !strings.Contains(string(log), "not found") {
		t.Errorf("observe with an unknown model: exit %d, stderr %q; want exit 1 naming the missing model", exit, tail(string(log), 400))
	}

	// Chat (role repeated in every delta) with a /metrics scrape that can
	// only fail: every request ok, one chunk per token, the first chunk is
	// the first token, and the scrape degrades to a warning.
	prefix := filepath.Join(s.out, "chat")
	s.mustTool(t, time.Minute, "chat.observe.log", "observe", append([]string{"--url", srv.url(), "--model", modelName,
		"--chat", "--record-itl", "--scrape-metrics", "--no-self-test", "--quiet", "-n", "6", "--concurrency", "2",
		"--trace-output", prefix}, workload...)...)
	log, _ = os.ReadFile(filepath.Join(s.out, "chat.observe.log"))
	if !strings.Contains(string(log), "metrics") || !strings.Contains(string(log), "WARN") {
		t.Errorf("observe --scrape-metrics against a server without /metrics: no warning in %q", tail(string(log), 400))
	}
	checkRecords(t, loadRun(t, "chat", prefix))
}

type rawChunk struct {
	Choices []json.RawMessage `json:"choices"`
	Usage   struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// rawStream posts a streamed completion and decodes every data event.
func rawStream(t *testing.T, ctx context.Context, url, body string) []rawChunk {
	t.Helper()
	req, err := newPost(ctx, url+"/v1/completions", body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []rawChunk
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		var c rawChunk
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("chunk %q: %v", line, err)
		}
		out = append(out, c)
	}
	return out
}

// checkRecords asserts what must hold for every request of a run.
func checkRecords(t *testing.T, r *run) {
	t.Helper()
	if len(r.trace.Records) == 0 {
		t.Fatalf("%s: no requests recorded", r.name)
	}
	bad := 0
	for i := range r.trace.Records {
		rec := &r.trace.Records[i]
		var problems []string
		if rec.Status != "ok" {
			problems = append(problems, "status "+rec.Status+": "+rec.ErrorMessage)
		}
		if rec.FinishReason != "length" {
			problems = append(problems, "finish_reason "+rec.FinishReason)
		}
		if rec.NumChunks != rec.OutputTokens+chunkOverhead {
			problems = append(problems, "chunks ≠ output tokens + 2")
		}
		if got := len(r.itl[rec.RequestID]); got != rec.NumChunks {
			problems = append(problems, "ITL rows ≠ chunks")
		}
		if rec.ServerInputTokens <= 0 {
			problems = append(problems, "no usage.prompt_tokens")
		}
		if rec.FirstTokenTimeUs != rec.FirstChunkTimeUs {
			problems = append(problems, "first chunk carries no token")
		}
		if len(problems) > 0 {
			bad++
			if bad <= 5 {
				t.Errorf("%s request %d (%d in, %d out, %d chunks): %s", r.name, rec.RequestID, rec.InputTokens,
					rec.OutputTokens, rec.NumChunks, strings.Join(problems, "; "))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d requests break the structure", r.name, bad, len(r.trace.Records))
	}
}

// checkStructure asserts structure and order across the runs.
func checkStructure(t *testing.T, s setup, runs map[string]*run) {
	names := make([]string, 0, len(runs))
	for name := range runs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		checkRecords(t, runs[name])
	}

	// Same spec and seed, same requests: at one user the order is fixed, so
	// the (prompt, output) lengths observe sent are the ones run generates.
	genPrefix := filepath.Join(s.out, "c1.generated")
	s.mustTool(t, time.Minute, "c1.generated.log", "run", append([]string{"--model", filepath.Join(s.out, "config.json"),
		"-n", "40", "--concurrency", "1", "--trace-output", genPrefix, "--quiet"}, workload...)...)
	_, data, _ := tracev2.PrefixPaths(genPrefix)
	gen, err := tracev2.Load(tracev2.Input{Path: data}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lengths := func(recs []tracev2.Record) [][2]int {
		var out [][2]int
		for _, r := range recs {
			out = append(out, [2]int{r.InputTokens, r.OutputTokens})
		}
		return out
	}
	if got, want := lengths(runs["c1"].trace.Records), lengths(gen.Records); !slices.Equal(got, want) {
		t.Errorf("c1 (input, output) tokens = %v, run generated %v", got, want)
	}

	// TTFT grows with the prompt (one user: no queueing, no neighbours).
	c1 := runs["c1"]
	ttft := c1.column(ttftMs)
	prompt := c1.column(func(r *tracev2.Record) float64 { return float64(r.ServerInputTokens) })
	r, err := stats.Pearson(prompt, ttft)
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]int, len(prompt))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return int(prompt[a] - prompt[b]) })
	third := len(idx) / 3
	var short, long []float64
	for _, i := range idx[:third] {
		short = append(short, ttft[i])
	}
	for _, i := range idx[len(idx)-third:] {
		long = append(long, ttft[i])
	}
	ms, ml := median(t, short), median(t, long)
	t.Logf("c1: Pearson r(prompt tokens, TTFT) = %.3f; median TTFT of the shortest third %.1f ms, of the longest %.1f ms", r, ms, ml)
	if r < 0.5 || ml < 1.5*ms {
		t.Errorf("TTFT does not grow with the prompt: r = %.3f (want ≥ 0.5), long/short medians %.1f/%.1f ms (want ≥ 1.5×)", r, ml, ms)
	}

	// ITL grows with concurrency up to the 4 slots, then stays. Each level's
	// gap is the smaller median of its run and its repeat: a busy host only
	// slows a run down, and once it made c2's gap 2.7× c1's and c4's only
	// 1.27× c2's.
	gap := map[string]float64{}
	for _, name := range []string{"c1", "c2", "c4", "c8"} {
		gap[name] = median(t, runs[name].tokenGapsMs())
		if rep, ok := runs[name+repeatSuffix]; ok {
			gap[name] = min(gap[name], median(t, rep.tokenGapsMs()))
		}
	}
	t.Logf("median token gap: c1 %.2f ms, c2 %.2f ms, c4 %.2f ms, c8 %.2f ms", gap["c1"], gap["c2"], gap["c4"], gap["c8"])
	if !(gap["c2"] > 1.3*gap["c1"] && gap["c4"] > 1.3*gap["c2"]) {
		t.Errorf("token gap does not grow with concurrency: c1 %.2f, c2 %.2f, c4 %.2f ms", gap["c1"], gap["c2"], gap["c4"])
	}
	// Past the slots the batch stops growing: 8 users decoding in one batch
	// would double the gap of 4.
	if g := gap["c8"] / gap["c4"]; g > 1.6 {
		t.Errorf("token gap at 8 users / at 4 = %.2f, want < 1.6 (4 slots either way)", g)
	}

	// Requests beyond the 4 slots queue: never more than 4 generate at
	// once, and at 8 users a request waits for a slot before its prefill.
	for _, name := range []string{"c4", "c8", "open"} {
		if got := runs[name].maxInService(); got > slots {
			t.Errorf("%s: %d requests generating at once, want ≤ %d", name, got, slots)
		}
	}
	if got := runs["c8"].maxInService(); got != slots {
		t.Errorf("c8: at most %d requests generating at once, want %d", got, slots)
	}
	t4, t8 := median(t, runs["c4"].column(ttftMs)), median(t, runs["c8"].column(ttftMs))
	e4 := median(t, runs["c4"].column(e2eMs))
	t.Logf("median TTFT c4 %.1f ms, c8 %.1f ms; median E2E c4 %.1f ms", t4, t8, e4)
	if t8 < 0.5*e4 || t8 < 3*t4 {
		t.Errorf("c8 median TTFT %.1f ms: want ≥ half of c4's median E2E (%.1f ms) and ≥ 3× c4's TTFT (%.1f ms): the 5th–8th requests should wait for a slot", t8, e4, t4)
	}
}
