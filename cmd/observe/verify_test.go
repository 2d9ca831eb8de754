package main

import (
	"strings"
	"testing"

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
