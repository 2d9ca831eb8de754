package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/tracev2"
)

// TestClosedLoopUsers: 4 closed-loop users for 20 requests. Every request
// has a row with a unique id, each user sends its next request only after
// its previous one ended (think time 5 ms later), and at most 4 are in
// flight.
func TestClosedLoopUsers(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	o := observeIn(testCtx(t), baseArgs(srv, "--streaming", "--no-self-test", "--concurrency", "4", "--think-time", "5ms",
		"--num-requests", "20")...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	tr := loadStream(t, o.Stdout)
	if len(tr.Records) != 20 || tr.Header.XExt.Loop != "closed" || !tr.Columns.ThinkTime {
		t.Fatalf("%d rows, loop %q, think_time column %v", len(tr.Records), tr.Header.XExt.Loop, tr.Columns.ThinkTime)
	}
	ids := map[int64]bool{}
	users := map[string][]tracev2.Record{}
	for _, r := range tr.Records {
		if ids[r.RequestID] || r.RequestID < 0 || r.RequestID >= 20 {
			t.Errorf("request_id %d duplicated or out of 0..19", r.RequestID)
		}
		ids[r.RequestID] = true
		users[r.SessionID] = append(users[r.SessionID], r)
		if r.Status != "ok" || r.ThinkTimeUs != 5000 {
			t.Errorf("row %d: %s %q think %d", r.RequestID, r.Status, r.ErrorMessage, r.ThinkTimeUs)
		}
	}
	if len(users) != 4 {
		t.Errorf("sessions %v, want 4 users", len(users))
	}
	for u, rows := range users {
		if !strings.HasPrefix(u, "concurrency_distribution_user_") {
			t.Errorf("session id %q", u)
		}
		for k := 1; k < len(rows); k++ {
			prev, cur := rows[k-1], rows[k]
			if cur.RoundIndex != prev.RoundIndex+1 || cur.ArrivalTimeUs < prev.LastChunkTimeUs+5000 || cur.SendTimeUs < cur.ArrivalTimeUs {
				t.Errorf("%s: round %d (arrival %d, send %d) after round %d (last chunk %d)", u, cur.RoundIndex,
					cur.ArrivalTimeUs, cur.SendTimeUs, prev.RoundIndex, prev.LastChunkTimeUs)
			}
		}
	}
	if m := srv.Stats().MaxInFlight; m > 4 {
		t.Errorf("%d requests in flight at once, want at most 4", m)
	}
}

// TestAccumulatingSessionResendsItsContext: each round of an accumulating
// session resends the previous round's prompt word for word, so the
// server's prefix cache sees the context; the rows keep the workload's
// token counts.
func TestAccumulatingSessionResendsItsContext(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond, ReportCachedTokens: true})
	spec := filepath.Join(t.TempDir(), "chat.yaml")
	writeFile(t, spec, `version: "2"
aggregate_rate: 20
num_requests: 6
clients:
  - id: chat
    rate_fraction: 1
    streaming: true
    arrival: {process: constant}
    input_distribution: {type: constant, params: {value: 40}}
    output_distribution: {type: constant, params: {value: 6}}
    reasoning:
      multi_turn: {max_rounds: 3, think_time_us: 1000, context_growth: accumulate}
`)
	o := observeIn(testCtx(t), "--url", srv.URL(), "--quiet", "--no-self-test", "--chat", "--workload-spec", spec)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	tr := loadStream(t, o.Stdout)
	if len(tr.Records) != 6 || tr.Header.SessionContextGrowth != "accumulate" {
		t.Fatalf("%d rows, session_context_growth %q", len(tr.Records), tr.Header.SessionContextGrowth)
	}
	prompt := map[string]string{}
	for _, q := range srv.Requests() {
		prompt[q.Header.Get("X-Request-Id")] = q.Prompt
	}
	bySession := map[string]map[int]tracev2.Record{}
	for _, r := range tr.Records {
		if bySession[r.SessionID] == nil {
			bySession[r.SessionID] = map[int]tracev2.Record{}
		}
		bySession[r.SessionID][r.RoundIndex] = r
	}
	for sess, rounds := range bySession {
		for k := 1; k < len(rounds); k++ {
			prev, cur := rounds[k-1], rounds[k]
			if cur.InputTokens != prev.InputTokens+prev.OutputTokens+40 {
				t.Errorf("%s round %d: input %d, want %d + %d + 40", sess, k, cur.InputTokens, prev.InputTokens, prev.OutputTokens)
			}
			if p, q := prompt[prev.XRequestID], prompt[cur.XRequestID]; !strings.HasPrefix(q, p+" ") {
				t.Errorf("%s round %d does not resend round %d's prompt", sess, k, k-1)
			}
			if cur.CachedTokens == 0 {
				t.Errorf("%s round %d: no cached tokens reported", sess, k)
			}
		}
	}
}

// TestDurationBoundsTheRun: --duration 300ms at 20 req/s sends the
// requests intended up to 300 ms (constant arrivals at 50, 100, ... ms),
// with --num-requests unlimited.
func TestDurationBoundsTheRun(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	o := observeIn(testCtx(t), baseArgs(srv, "--no-self-test", "--rate", "20", "--duration", "300ms")...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	tr := loadStream(t, o.Stdout)
	var arrivals []string
	for _, r := range tr.Records {
		arrivals = append(arrivals, fmt.Sprint(r.ArrivalTimeUs))
		if r.ArrivalTimeUs > 300_000 {
			t.Errorf("row %d intended at %d µs, after the 300 ms duration", r.RequestID, r.ArrivalTimeUs)
		}
	}
	if len(tr.Records) != 6 {
		t.Errorf("%d rows (arrivals %v), want 6", len(tr.Records), arrivals)
	}
}
