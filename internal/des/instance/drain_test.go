package instance

import (
	"testing"

	"servesim/internal/des"
	"servesim/internal/testkit/fake"
)

// TestWithdraw: with one running request and others pending and queued,
// Withdraw hands back exactly the never-scheduled ones, as new requests
// with their deadline timers gone, the KV blocks conserved and the
// submitted count lowered; the running one completes, and a withdrawn one
// runs to completion on another instance.
func TestWithdraw(t *testing.T) {
	cfg := baseConfig()
	cfg.MaxNumSeqs = 1
	h := newHarness(t, cfg, fake.Linear{Base: 100, Queue: 30})
	var reqs []*Request
	for i := range 4 {
		r := &Request{ID: int64(i + 1), ArrivalUs: int64(i * 10), Prompt: tokens(8, int32(100*i)), OutputLen: 3, DeadlineUs: 1_000_000}
		reqs = append(reqs, r)
		h.at(r)
	}
	var back []*Request
	// Arrivals at 0, 10, 20, 30 µs enqueue 30 µs later. At 45 µs request 1
	// runs, 2 waits in the queue (one sequence at a time), 3 and 4 are
	// still pending.
	h.eng.Schedule(45, des.PrioInstanceArrival, func(int64, any) {
		h.in.Withdraw(func(r *Request) { back = append(back, r) })
	}, nil)
	h.run()
	if len(back) != 3 || back[0].ID != 3 || back[1].ID != 4 || back[2].ID != 2 {
		ids := []int64{}
		for _, r := range back {
			ids = append(ids, r.ID)
		}
		t.Fatalf("withdrawn %v, want pending 3, 4 (by id), then queued 2", ids)
	}
	for _, r := range back {
		if r.Status() != StatusNew || r.timeoutH.Valid() || r.inst != nil {
			t.Fatalf("request %d after Withdraw: %s, timer %v", r.ID, r.Status(), r.timeoutH.Valid())
		}
	}
	if res, ok := h.results[1]; !ok || res.Status != StatusCompleted || len(h.results) != 1 {
		t.Fatalf("results %v, want request 1 completed alone", h.results)
	}
	if c := h.in.Counters(); c.Submitted != 1 || c.Completed != 1 || c.TimedOut != 0 {
		t.Fatalf("counters %+v, want 1 submitted and completed", c)
	}
	other := newHarness(t, baseConfig(), fake.Linear{Base: 100})
	other.eng.Schedule(h.eng.Now(), des.PrioInstanceArrival, func(int64, any) {
		if err := other.in.Submit(back[2]); err != nil {
			t.Fatal(err)
		}
	}, nil)
	other.run()
	if res := other.results[2]; res.Status != StatusCompleted || res.OutputTokens != 3 {
		t.Fatalf("withdrawn request resubmitted: %+v", res)
	}
}
