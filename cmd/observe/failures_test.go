package main

import (
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/httpload/fakevllm"
)

// TestFailedRequestsFailTheRun: a run in which every request failed exits
// 1; --max-error-rate turns partial failure into exit 3; the trace holds
// every request either way.
func TestFailedRequestsFailTheRun(t *testing.T) {
	every := func(int64, *fakevllm.Request) fakevllm.Fault {
		return fakevllm.Fault{Kind: fakevllm.HTTPError, Status: 500}
	}
	half := func(id int64, _ *fakevllm.Request) fakevllm.Fault {
		if id%2 == 0 {
			return fakevllm.Fault{Kind: fakevllm.HTTPError, Status: 500}
		}
		return fakevllm.Fault{}
	}
	tests := []struct {
		name  string
		fault func(int64, *fakevllm.Request) fakevllm.Fault
		extra []string
		code  int
		msg   string
	}{
		{"every request failed", every, nil, exitcode.Failure, "every request failed (8: 8 errors, 0 timeouts)"},
		{"half failed, no threshold", half, nil, exitcode.OK, ""},
		{"half failed, threshold 25%", half, []string{"--max-error-rate", "0.25"}, exitcode.Assertion, "4 of 8 requests failed (50.0%), more than --max-error-rate 0.25"},
		{"half failed, threshold 50%", half, []string{"--max-error-rate", "0.5"}, exitcode.OK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startFake(t, fakevllm.Config{Fault: tt.fault})
			prefix := filepath.Join(t.TempDir(), "cap")
			o := observeIn(testCtx(t), baseArgs(srv, append([]string{"--num-requests", "8", "--rate", "200", "--no-self-test",
				"--trace-output", prefix}, tt.extra...)...)...)
			if o.Code != tt.code || (tt.msg != "" && !strings.Contains(o.Stderr, tt.msg)) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", o.Code, o.Stderr, tt.code, tt.msg)
			}
			if n := len(loadFiles(t, prefix).Records); n != 8 {
				t.Errorf("%d rows, want 8", n)
			}
		})
	}
	o := observeIn(testCtx(t), "--url", "http://127.0.0.1:1", "--max-error-rate", "1.5")
	if o.Code != exitcode.Usage || !strings.Contains(o.Stderr, "--max-error-rate 1.5: want a share in [0, 1]") {
		t.Errorf("--max-error-rate 1.5: exit %d, stderr %s", o.Code, o.Stderr)
	}
}
