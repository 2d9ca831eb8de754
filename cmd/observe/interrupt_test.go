package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"servesim/internal/cli"
	"servesim/internal/httpload/fakevllm"
	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2"
)

// interruptRun starts a long open-loop run (2,000 requests at 200/s, each
// streaming for about 2 s) against srv, cancels it once the server has seen
// 20 requests, closes abort too when asked, and returns the clitest.Result and how
// long the command took after the cancel.
func interruptRun(t *testing.T, srv *fakevllm.Server, drain string, abort bool) (clitest.Result, time.Duration) {
	t.Helper()
	base := testCtx(t)
	ab := make(chan struct{})
	ctx, cancel := context.WithCancelCause(cli.WithAbort(base, ab))
	defer cancel(nil)
	done := make(chan clitest.Result, 1)
	go func() {
		done <- observeIn(ctx, baseArgs(srv, "--streaming", "--no-self-test", "--rate", "200", "--num-requests", "2000",
			"--output-tokens", "400", "--drain-timeout", drain)...)
	}()
	if err := srv.WaitFor(base, func(s fakevllm.Stats) bool { return s.Requests >= 20 }); err != nil {
		t.Fatal(err)
	}
	cancel(errors.New("interrupted by interrupt"))
	start := time.Now()
	if abort {
		close(ab)
	}
	o := <-done
	return o, time.Since(start)
}

// checkInterrupted: exit 130, a valid single stream whose trailer says
// interrupted, and a row for every request the server saw.
func checkInterrupted(t *testing.T, srv *fakevllm.Server, o clitest.Result, wantMsg string) *tracev2.Trace {
	t.Helper()
	if o.Code != 130 {
		t.Fatalf("exit %d (%v), want 130\n%s", o.Code, o.Err, o.Stderr)
	}
	tr := loadStream(t, o.Stdout)
	if x := tr.Header.XExt; x == nil || x.Interrupted == nil || !*x.Interrupted {
		t.Errorf("x_ext.interrupted not true: %+v", tr.Header.XExt)
	}
	if !strings.Contains(o.Stdout, "\n#+ x_ext:\n#+     interrupted: true\n") {
		t.Errorf("no trailer marking the interrupt:\n%s", o.Stdout[max(0, len(o.Stdout)-300):])
	}
	rows := map[string]tracev2.Record{}
	for _, r := range tr.Records {
		rows[r.XRequestID] = r
		if r.Status != "ok" && !strings.HasPrefix(r.ErrorMessage, "cancelled: ") {
			t.Errorf("row %d: %s %q, want ok or cancelled", r.RequestID, r.Status, r.ErrorMessage)
		}
		if r.Status != "ok" && r.SendTimeUs > 0 && !strings.Contains(r.ErrorMessage, wantMsg) {
			t.Errorf("row %d: %q, want it to say %q", r.RequestID, r.ErrorMessage, wantMsg)
		}
	}
	for _, q := range srv.Requests() {
		if _, ok := rows[q.Header.Get("X-Request-Id")]; !ok {
			t.Errorf("server request %d has no row", q.N)
		}
	}
	if !strings.Contains(o.Stderr, "Interrupted:") {
		t.Errorf("summary does not say interrupted:\n%s", o.Stderr)
	}
	return tr
}

// TestCancelMidRunLeavesValidTrace: Ctrl+C (ctx cancelled) stops sending,
// cancels what is still in flight after the 100 ms drain, writes the
// trailer and exits 130; every request the server saw has its row.
func TestCancelMidRunLeavesValidTrace(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: 5 * time.Millisecond})
	o, took := interruptRun(t, srv, "100ms", false)
	tr := checkInterrupted(t, srv, o, "still in flight after the 100ms drain")
	if len(tr.Records) < 20 || len(tr.Records) > 400 {
		t.Errorf("%d rows", len(tr.Records))
	}
	if took > 5*time.Second {
		t.Errorf("took %v after the interrupt with a 100 ms drain", took)
	}
}

// TestSecondInterruptAbortsTheDrain: with a one-minute drain, the second
// interrupt cancels the requests in flight at once.
func TestSecondInterruptAbortsTheDrain(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: 5 * time.Millisecond})
	o, took := interruptRun(t, srv, "1m", true)
	checkInterrupted(t, srv, o, "aborted")
	if took > 5*time.Second {
		t.Errorf("took %v after the second interrupt", took)
	}
}
