package instance

import (
	"testing"

	"servesim/internal/testkit/fake"
)

// TestAsyncSchedulingJoinStep: which step a request joins, with and
// without asynchronous scheduling. Steps last 1000 µs (no per-token cost);
// request 1 arrives at 0 and decodes for 40 steps, so the engine is busy
// and carries work over from step to step (steps start at 0, 1000, 2000,
// ...). Request 2 arrives at the given time; the table gives the start of
// the step that first schedules it.
func TestAsyncSchedulingJoinStep(t *testing.T) {
	for _, tc := range []struct {
		name         string
		arrive       int64
		sync, async_ int64
	}{
		{"during step 3", 3500, 4000, 5000},
		{"right after step 3 starts", 3001, 4000, 5000},
		{"at step 4's start", 4000, 4000, 5000},
		{"just before step 4 starts", 3999, 4000, 5000},
		{"during the first step", 10, 1000, 2000},
		{"after request 1 ended (idle engine)", 90_000, 90_000, 90_000},
	} {
		for _, async := range []bool{false, true} {
			cfg := baseConfig()
			cfg.AsyncScheduling = async
			h := newHarness(t, cfg, fake.Linear{Base: 1000})
			h.at(&Request{ID: 1, ArrivalUs: 0, Prompt: tokens(8, 0), OutputLen: 40, MaxOutputLen: 40})
			h.at(&Request{ID: 2, ArrivalUs: tc.arrive, Prompt: tokens(8, 500), OutputLen: 2, MaxOutputLen: 2})
			h.run()
			want := tc.sync
			if async {
				want = tc.async_
			}
			if got := h.results[2].FirstScheduledUs; got != want {
				t.Errorf("%s, async %v: request 2 (arrival %d) first scheduled at %d, want %d",
					tc.name, async, tc.arrive, got, want)
			}
			if got := h.results[1].E2EUs; got != 40_000 {
				t.Errorf("%s, async %v: request 1 E2E %d, want 40000 (steps unchanged)", tc.name, async, got)
			}
		}
	}
}

// TestAsyncSchedulingIdleEngineJoinsAtOnce: a request that finds the engine
// idle, or arriving while the last step carries nothing over, is scheduled
// by the next step that starts, as without asynchronous scheduling.
func TestAsyncSchedulingIdleEngineJoinsAtOnce(t *testing.T) {
	cfg := baseConfig()
	cfg.AsyncScheduling = true
	h := newHarness(t, cfg, fake.Linear{Base: 1000})
	// Request 1 is one step long (prefill producing its only token), so the
	// step [0, 1000) carries nothing over; request 2 arrives during it.
	h.at(&Request{ID: 1, ArrivalUs: 0, Prompt: tokens(8, 0), OutputLen: 1, MaxOutputLen: 1})
	h.at(&Request{ID: 2, ArrivalUs: 400, Prompt: tokens(8, 500), OutputLen: 1, MaxOutputLen: 1})
	h.run()
	if got := h.results[2].FirstScheduledUs; got != 1000 {
		t.Errorf("request 2 first scheduled at %d, want 1000", got)
	}
	if d := h.in.QueueDepth(); d != 0 {
		t.Errorf("queue depth %d at the end, want 0", d)
	}
}
