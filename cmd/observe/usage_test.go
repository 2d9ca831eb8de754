package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"servesim/internal/httpload/fakevllm"
)

// TestUsageContradictedByStream: a server that streams three tokens and
// reports completion_tokens 16,000,000 has its row record the three
// streamed tokens, flagged in error_message, and the result's throughput
// counts three.
func TestUsageContradictedByStream(t *testing.T) {
	srv := startFake(t, fakevllm.Config{Model: "fake-model"})
	target, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/completions") {
			proxy.ServeHTTP(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for range 3 {
			fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":null}]}\n\n")
		}
		fmt.Fprint(w, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":16000000}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(liar.Close)
	dir := t.TempDir()
	o := observeIn(testCtx(t), "--url", liar.URL, "--model", "fake-model", "--streaming", "--prompt-tokens", "8",
		"--prompt-tokens-stdev", "0", "--output-tokens", "3", "--output-tokens-stdev", "0", "--num-requests", "2",
		"--rate", "100", "--no-self-test", "--trace-output", filepath.Join(dir, "cap"), "--result-json", filepath.Join(dir, "r.json"))
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	tr := loadFiles(t, filepath.Join(dir, "cap"))
	want := "usage disagrees with the stream: completion_tokens 16000000 for 3 text chunks (max_tokens 3); output_tokens is the streamed count"
	for _, r := range tr.Records {
		if r.Status != "ok" || r.OutputTokens != 3 || r.ErrorMessage != want {
			t.Errorf("row %d: %s, output_tokens %d, error_message %q; want ok, 3, %q", r.RequestID, r.Status, r.OutputTokens, r.ErrorMessage, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil || !strings.Contains(string(b), `"total_output_tokens": 6`) {
		t.Errorf("result: %v\n%s", err, b)
	}
}

// TestEndlessResponseIsAnErrorRow: a server that answers one request with
// an endless stream has that request ended as an error row once it passes
// its max_tokens plus slack in chunks; the other rows are recorded and the
// run ends.
func TestEndlessResponseIsAnErrorRow(t *testing.T) {
	srv := startFake(t, fakevllm.Config{Model: "fake-model"})
	target, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var calls atomic.Int64
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/completions") || calls.Add(1) != 2 {
			proxy.ServeHTTP(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(w, "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":null}]}\n\n"); err != nil {
				return
			}
		}
	}))
	t.Cleanup(endless.Close)
	dir := t.TempDir()
	o := observeIn(testCtx(t), "--url", endless.URL, "--model", "fake-model", "--streaming", "--prompt-tokens", "8",
		"--prompt-tokens-stdev", "0", "--output-tokens", "4", "--output-tokens-stdev", "0", "--num-requests", "3",
		"--rate", "100", "--max-concurrency", "1", "--no-self-test", "--trace-output", filepath.Join(dir, "cap"))
	tr := loadFiles(t, filepath.Join(dir, "cap"))
	var errs, oks int
	for _, r := range tr.Records {
		switch {
		case r.Status == "error" && strings.HasPrefix(r.ErrorMessage, "streaming error: more than 69 chunks (max_tokens 4)"):
			errs++
		case r.Status == "ok":
			oks++
		}
	}
	if errs != 1 || oks != 2 {
		t.Errorf("%d endless error rows and %d ok rows, want 1 and 2 (exit %d)\n%s", errs, oks, o.Code, o.Stderr)
	}
}
