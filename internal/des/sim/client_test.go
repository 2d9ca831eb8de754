package sim

import (
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/metrics"
)

// runCapped simulates n requests arriving together at t = 0 behind a client
// with the given cap, one at a time through the server (max-num-seqs 1) so
// every completion time is known, and returns their results by id.
func runCapped(t *testing.T, n int, client Client, horizonUs int64) (map[int64]instance.Result, Outcome, metrics.Summary) {
	t.Helper()
	return runCappedBudget(t, n, client, horizonUs, 0)
}

// runCappedBudget is runCapped with a per-request timeout budget (0 = none).
func runCappedBudget(t *testing.T, n int, client Client, horizonUs, budgetUs int64) (map[int64]instance.Result, Outcome, metrics.Summary) {
	t.Helper()
	cfg := smallConfig()
	cfg.Instance.MaxNumSeqs = 1
	cfg.Client = client
	cfg.HorizonUs = horizonUs
	var reqs []*instance.Request
	for i := range n {
		reqs = append(reqs, &instance.Request{ID: int64(i), ArrivalUs: 0, Prompt: prompt(32, int32(i)<<12), OutputLen: 4, MaxOutputLen: 4, DeadlineUs: budgetUs})
	}
	agg, _ := metrics.NewAggregator(nil)
	got := map[int64]instance.Result{}
	s, err := New(cfg, &SliceSource{Reqs: reqs}, SinkFunc(func(res *instance.Result, r *instance.Request) {
		if _, dup := got[res.ID]; dup {
			t.Errorf("request %d reported twice", res.ID)
		}
		got[res.ID] = *res
		agg.Add(res)
	}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	return got, out, agg.Summary(out.Info)
}

// TestClientCapSendsAtSlotFree: with a cap of 2 and the server taking one
// request at a time, request k ≥ 2 is sent exactly when request k − 2's
// last byte reached the client (arrival + E2E) plus the send gap, and its
// latencies count from that send.
func TestClientCapSendsAtSlotFree(t *testing.T) {
	for _, gap := range []int64{0, 700} {
		got, out, _ := runCapped(t, 6, Client{MaxConcurrency: 2, SendGapUs: gap}, 0)
		if len(got) != 6 || out.Injected != 6 {
			t.Fatalf("gap %d: %d results, %d injected; want 6 and 6", gap, len(got), out.Injected)
		}
		for k := int64(0); k < 6; k++ {
			r := got[k]
			if r.Status != instance.StatusCompleted {
				t.Fatalf("gap %d: request %d status %v", gap, k, r.Status)
			}
			want := int64(0)
			if k >= 2 {
				p := got[k-2]
				want = p.ArrivalUs + p.E2EUs + gap
			}
			if r.ArrivalUs != want {
				t.Errorf("gap %d: request %d sent at %d µs, want %d (slot of request %d)", gap, k, r.ArrivalUs, want, k-2)
			}
			if r.FirstScheduledUs < r.ArrivalUs || r.TTFTUs <= 0 {
				t.Errorf("gap %d: request %d scheduled at %d before its send %d, or TTFT %d", gap, k, r.FirstScheduledUs, r.ArrivalUs, r.TTFTUs)
			}
		}
	}
}

// TestClientCapTimeoutRunsFromTheSend: a client's timeout starts when it
// sends, so six requests held behind a cap of one, each with a budget of
// one and a half service times, all complete although the last waits five
// service times in the client's queue; with half a service time, all time
// out.
func TestClientCapTimeoutRunsFromTheSend(t *testing.T) {
	free, _, _ := runCapped(t, 6, Client{MaxConcurrency: 1}, 0)
	service := free[0].E2EUs
	if service <= 0 || free[5].ArrivalUs < 5*service {
		t.Fatalf("service %d µs, last send %d: want the last sent after five services", service, free[5].ArrivalUs)
	}
	got, _, sum := runCappedBudget(t, 6, Client{MaxConcurrency: 1}, 0, service*3/2)
	if sum.CompletedRequests != 6 {
		t.Fatalf("budget 1.5 services: %d of 6 completed; a held request's wait counted against its timeout", sum.CompletedRequests)
	}
	for id, r := range got {
		if r != free[id] {
			t.Errorf("request %d: %+v with a budget it never used, %+v without", id, r, free[id])
		}
	}
	_, _, sum = runCappedBudget(t, 6, Client{MaxConcurrency: 1}, 0, service/2)
	if sum.TimedOutRequests != 6 {
		t.Errorf("budget half a service: %d of 6 timed out, want all", sum.TimedOutRequests)
	}
}

// TestClientCapNoneOrInfiniteChangesNothing: no cap and a cap above the
// number of requests give identical results.
func TestClientCapNoneOrInfiniteChangesNothing(t *testing.T) {
	open, _, s1 := runCapped(t, 40, Client{}, 0)
	wide, _, s2 := runCapped(t, 40, Client{MaxConcurrency: 1000, SendGapUs: 5000}, 0)
	for id, r := range open {
		if wide[id] != r {
			t.Fatalf("request %d: open loop %+v, cap 1000 %+v", id, r, wide[id])
		}
	}
	if s1.E2EMeanMs != s2.E2EMeanMs || s1.CompletedRequests != 40 {
		t.Errorf("summaries differ or incomplete: %v vs %v ms, %d completed", s1.E2EMeanMs, s2.E2EMeanMs, s1.CompletedRequests)
	}
}

// TestClientCapHorizonAccountsForHeld: requests the client still holds when
// a horizon ends the run are reported once, as still queued (INV-1).
func TestClientCapHorizonAccountsForHeld(t *testing.T) {
	got, out, sum := runCapped(t, 30, Client{MaxConcurrency: 1}, 60_000)
	if len(got) != 30 {
		t.Fatalf("%d results, want 30", len(got))
	}
	if sum.CompletedRequests == 0 || sum.StillQueued == 0 {
		t.Fatalf("completed %d, still queued %d: the horizon should cut the run in the middle", sum.CompletedRequests, sum.StillQueued)
	}
	total := sum.CompletedRequests + sum.StillQueued + sum.StillRunning + sum.DroppedUnservable + sum.TimedOutRequests + sum.RejectedRequests
	if total != out.Injected || out.Injected != 30 {
		t.Errorf("buckets sum to %d, injected %d; want 30 each", total, out.Injected)
	}
}

func TestClientValidate(t *testing.T) {
	for _, c := range []Client{{MaxConcurrency: -1}, {MaxConcurrency: MaxClientConcurrency + 1}, {SendGapUs: -1}, {SendGapUs: MaxSendGapUs + 1}} {
		if c.Validate() == nil {
			t.Errorf("%+v: no error", c)
		}
		cfg := smallConfig()
		cfg.Client = c
		if _, err := New(cfg, &SliceSource{}, SinkFunc(func(*instance.Result, *instance.Request) {})); err == nil {
			t.Errorf("New with client %+v: no error", c)
		}
	}
}
