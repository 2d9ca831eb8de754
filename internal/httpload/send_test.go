package httpload

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestHeldOpenAfterDone: a server that sends [DONE] but never ends the body
// does not hold the client: the answer is complete, and the read is cut off.
func TestHeldOpenAfterDone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	c, err := NewClient(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	c.drainAfterDone = 20 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := c.Do(ctx, NewClock(time.Now()), Job{Prompt: "x", Stream: true})
	if r.Status != StatusOK || r.NumChunks != 1 || r.TextChunks != 1 || r.FinishReason != "length" || r.DoneUS == 0 {
		t.Errorf("got %s %q, %d chunks, finish %q, done %d", r.Status, r.Error, r.NumChunks, r.FinishReason, r.DoneUS)
	}
	if ctx.Err() != nil {
		t.Error("the read was not cut off before the test's bound")
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  a\n\tb  ", "a b"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := oneLine([]byte(tc.in)); got != tc.want {
			t.Errorf("oneLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	long := make([]byte, 3000)
	for i := range long {
		long[i] = 'x'
	}
	long[maxErrorBodyBytes-1] = 0xc3 // a 2-byte rune cut at the bound
	long[maxErrorBodyBytes] = 0xa9
	if got := oneLine(long); len(got) > maxErrorBodyBytes {
		t.Errorf("long body kept %d bytes, want ≤ %d", len(got), maxErrorBodyBytes)
	}
	if got := jsonText([]byte(`a \"q\" \u00e9`)); got != `a "q" é` {
		t.Errorf("jsonText: %q", got)
	}
}

// TestEndlessStreamEnds: a server that streams tokens forever has the
// response ended as an error row once it passes MaxChunks(max_tokens); the
// chunk times kept stay bounded.
func TestEndlessStreamEnds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte("data: {\"choices\":[{\"text\":\"a\"}]}\n\n")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	c, err := NewClient(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, maxTokens := range []int{4, 1000} {
		r := c.Do(ctx, NewClock(time.Now()), Job{Prompt: "x", Stream: true, MaxTokens: maxTokens})
		limit := MaxChunks(maxTokens)
		want := fmt.Sprintf("streaming error: more than %d chunks (max_tokens %d): response ended", limit, maxTokens)
		if r.Status != StatusError || r.Error != want || r.NumChunks != limit || len(r.ChunkUS) != limit {
			t.Errorf("max_tokens %d: got %s %q, %d chunks (%d times), want error %q after %d", maxTokens, r.Status, r.Error,
				r.NumChunks, len(r.ChunkUS), want, limit)
		}
	}
	if ctx.Err() != nil {
		t.Error("the endless response was not ended before the test's bound")
	}
	if got := MaxChunks(0); got != maxChunksUnlimited {
		t.Errorf("without max_tokens: %d chunks, want %d", got, maxChunksUnlimited)
	}
}

// TestUsageMismatch: a usage the stream contradicts beyond the tolerance
// is flagged, and the streamed count is the output.
func TestUsageMismatch(t *testing.T) {
	for _, tc := range []struct {
		maxTokens, completion, textChunks int
		mismatch                          bool
		tokens                            int
	}{
		{4, 4, 4, false, 4},
		{128, 100, 40, false, 100},  // speculative decoding: several tokens a chunk
		{0, 16_000_000, 3, true, 3}, // absurd
		{64, 100, 90, true, 90},     // past max_tokens
		{0, 2, 40, true, 40},        // fewer tokens than text chunks
		{0, 3*maxTokensPerChunk + 16, 3, false, 3*maxTokensPerChunk + 16},
	} {
		r := Result{Job: Job{Stream: true, MaxTokens: tc.maxTokens}, Status: StatusOK, HasUsage: true,
			CompletionTokens: tc.completion, TextChunks: tc.textChunks}
		why := r.UsageMismatch()
		if (why != "") != tc.mismatch || r.GeneratedTokens() != tc.tokens {
			t.Errorf("%+v: mismatch %q, tokens %d; want mismatch %v, tokens %d", tc, why, r.GeneratedTokens(), tc.mismatch, tc.tokens)
		}
	}
}
