package fakevllm

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStepEngine: with Steps the answer is timed by engine steps: a
// prefill step gives the first token, each decode step one more, and the
// steps' compositions are what a latency model is asked about.
func TestStepEngine(t *testing.T) {
	var mu sync.Mutex
	var steps []Step
	srv, err := Start(Config{Steps: func(s Step) time.Duration {
		mu.Lock()
		steps = append(steps, Step{PrefillTokens: slices.Clone(s.PrefillTokens), Decodes: s.Decodes, DecodeContext: s.DecodeContext})
		mu.Unlock()
		return 5 * time.Millisecond
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	start := time.Now()
	resp, body := post(t, srv.URL()+"/v1/completions", `{"prompt":"a b c d","max_tokens":3,"stream":true}`, nil)
	took := time.Since(start)
	if resp.StatusCode != 200 || strings.Count(string(body), `"text":" tok"`) != 3 {
		t.Fatalf("status %d, body %s: want 3 tokens", resp.StatusCode, body)
	}
	mu.Lock()
	defer mu.Unlock()
	// 4 words and a BOS: 5 prompt tokens; then 5+1 and 5+2 tokens of context.
	want := []Step{{PrefillTokens: []int{5}}, {Decodes: 1, DecodeContext: 6}, {Decodes: 1, DecodeContext: 7}}
	if len(steps) != len(want) {
		t.Fatalf("got steps %+v, want %+v", steps, want)
	}
	for i := range want {
		if !slices.Equal(steps[i].PrefillTokens, want[i].PrefillTokens) || steps[i].Decodes != want[i].Decodes || steps[i].DecodeContext != want[i].DecodeContext {
			t.Errorf("step %d: got %+v, want %+v", i, steps[i], want[i])
		}
	}
	if took < 15*time.Millisecond {
		t.Errorf("answer took %v, want at least three 5 ms steps", took)
	}
}
