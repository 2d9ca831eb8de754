package fakevllm

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func post(t *testing.T, url, body string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestWireFormat pins the bytes the server sends, so clients tested
// against it are tested against vLLM's shapes.
func TestWireFormat(t *testing.T) {
	srv, err := Start(Config{Created: 1767225600, OutputTokens: 3, ReasoningTokens: 1, ReportCachedTokens: true, TokensPerChunk: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tests := []struct{ name, path, body string }{
		{"chat_stream", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"a b c"}],"stream":true,"stream_options":{"include_usage":true}}`},
		{"completions_stream", "/v1/completions", `{"prompt":"a b c","stream":true,"max_tokens":2}`},
		{"chat_whole", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a b c"}]}`},
		{"completions_whole", "/v1/completions", `{"prompt":"a b c","max_tokens":1}`},
		{"bad_request", "/v1/completions", `{"prompt":"a","max_tokens":1,"min_tokens":2}`},
		{"tokenize", "/tokenize", `{"prompt":"a b c","add_special_tokens":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, got := post(t, srv.URL()+tc.path, tc.body, http.Header{"Content-Type": {"application/json"}})
			got = append([]byte(resp.Status+"\n"+resp.Header.Get("Content-Type")+"\n\n"), got...)
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
	if n := srv.Stats().Requests; n != 5 {
		t.Errorf("%d completion requests counted, want 5", n)
	}
}

func TestHeaderFault(t *testing.T) {
	tests := []struct {
		header string
		want   Fault
	}{
		{"", Fault{}},
		{"nonsense", Fault{}},
		{"http status=503", Fault{Kind: HTTPError, Status: 503}},
		{"reset after=3", Fault{Kind: Reset, AfterChunks: 3}},
		{"stall before-head", Fault{Kind: Stall, BeforeHead: true}},
		{"garbage after=-2", Fault{Kind: Garbage}},
		{"stream-error after=1", Fault{Kind: StreamError, AfterChunks: 1}},
		{"no-done", Fault{Kind: NoDone}},
	}
	for _, tc := range tests {
		req := &Request{Header: http.Header{FaultHeader: {tc.header}}}
		if got := HeaderFault(0, req); got != tc.want {
			t.Errorf("%q: got %+v, want %+v", tc.header, got, tc.want)
		}
	}
}

// TestSchedule: chunks leave at admission + TTFT + k·ITL, never early.
func TestSchedule(t *testing.T) {
	srv, err := Start(Config{TTFT: 3 * time.Millisecond, ITL: 2 * time.Millisecond, OutputTokens: 4, RecordTimings: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	post(t, srv.URL()+"/v1/completions", `{"prompt":"x","stream":true}`, http.Header{"X-Request-Id": {"r1"}})
	tm, ok := srv.Timing("r1")
	if !ok || len(tm.Chunks) != 4 || len(tm.Due) != 4 {
		t.Fatalf("timing %+v", tm)
	}
	for k, due := range tm.Due {
		if want := tm.Admitted.Add(3*time.Millisecond + time.Duration(k)*2*time.Millisecond); !due.Equal(want) {
			t.Errorf("chunk %d due %v after admission, want %v", k, due.Sub(tm.Admitted), want.Sub(tm.Admitted))
		}
		if tm.Chunks[k].Before(due) {
			t.Errorf("chunk %d left %v early", k, due.Sub(tm.Chunks[k]))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.WaitFor(ctx, func(s Stats) bool { return s.Completed == 1 && s.InFlight == 0 }); err != nil {
		t.Error(err)
	}
}

// TestSharedPrefixTokens: the server counts, per request, the leading words
// identical to the start of some earlier prompt, word by word.
func TestSharedPrefixTokens(t *testing.T) {
	srv, err := Start(Config{CountSharedPrefix: true, OutputTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	prompts := []struct {
		text string
		want int
	}{
		{"a b c d", 0},
		{"a b c x y", 3},
		{"a b c d e f", 4},
		{"z a b", 0},
		{"a b c x y", 5},
		{"a q", 1},
	}
	for _, p := range prompts {
		resp, body := post(t, srv.URL()+"/v1/completions", `{"prompt":"`+p.text+`","max_tokens":1}`, http.Header{"Content-Type": {"application/json"}})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%q: %s %s", p.text, resp.Status, body)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != len(prompts) {
		t.Fatalf("%d requests kept, want %d", len(reqs), len(prompts))
	}
	for i, p := range prompts {
		if got := reqs[i].SharedPrefixTokens; got != p.want {
			t.Errorf("%q: shared %d leading tokens, want %d", p.text, got, p.want)
		}
	}
}
