package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
)

// TestVerifyBadPlanExits2: a PLAN that is no sweep document is one line,
// exit 2, and no request reaches the server.
func TestVerifyBadPlanExits2(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	r := observeIn(testCtx(t), "verify", "testdata/missing-plan.json", "--url", srv.URL(), "--quiet")
	if r.Code != 2 || !strings.Contains(r.Stderr, "missing-plan.json") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q: want one line naming the plan, exit 2", r.Code, r.Stderr)
	}
	if n := srv.Stats().Requests; n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
}

// TestVerifyGetsPastItsFlags: a valid plan reaches the server check (the
// probes' settings hold without observe's own run flags, such as
// --scrape-interval): a server of another model is refused there, in one
// line, before any request.
func TestVerifyGetsPastItsFlags(t *testing.T) {
	srv := startFake(t, fakevllm.Config{Model: "meta-llama/Llama-3.1-8B-Instruct"})
	r := observeIn(testCtx(t), "verify", "testdata/plan.json", "--url", srv.URL(), "--workload", "chatbot", "--num-requests", "200", "--quiet")
	if r.Code != 2 || !strings.Contains(r.Stderr, "the plan was made for qwen3-14b, but the server serves meta-llama/Llama-3.1-8B-Instruct") {
		t.Errorf("exit %d, stderr %q: want the model check's refusal", r.Code, r.Stderr)
	}
	if n := srv.Stats().Requests; n != 0 {
		t.Errorf("%d requests sent, want 0", n)
	}
	// A server of the plan's model: probes, fit and page (exit 0).
	srv = startFake(t, fakevllm.Config{Model: "Qwen/Qwen3-14B", TTFT: 20 * time.Millisecond, ITL: 5 * time.Millisecond})
	out := filepath.Join(t.TempDir(), "probe")
	r = observeIn(testCtx(t), "verify", "testdata/plan.json", "--url", srv.URL(), "--workload", "chatbot", "--num-requests", "200",
		"--probe-requests", "10", "--max-iterations", "2", "--no-self-test", "-o", out, "--format", "json", "--quiet")
	var page struct {
		Predicted float64 `json:"predicted_max_rate_rps"`
		Probes    []struct {
			Rate float64 `json:"rate_rps"`
		} `json:"probes"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &page); r.Code != 0 || err != nil || len(page.Probes) != 3 || page.Predicted <= 0 {
		t.Fatalf("verify on a server of the plan's model: exit %d, %v, page %+v\n%s", r.Code, err, page, r.Stderr)
	}
	if n := srv.Stats().Requests; n != 30 {
		t.Errorf("%d requests sent, want 3 probes of 10", n)
	}
	// --scrape-interval is still checked where it is used.
	r = observeIn(testCtx(t), "--url", srv.URL(), "--scrape-metrics", "--scrape-interval", "0s", "-n", "1", "--no-self-test", "--quiet")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--scrape-interval 0s: must be > 0") {
		t.Errorf("--scrape-metrics --scrape-interval 0s: exit %d, %q", r.Code, r.Stderr)
	}
}
