package replay

import (
	"context"
	"errors"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/tracev2"
)

// TestInterruptedSimulation: cancelling the context stops the injections;
// the requests in flight run to their end, each reaches the sink once, and
// the Outcome (Interrupted) summarises exactly them.
func TestInterruptedSimulation(t *testing.T) {
	recs := make(RecordRows, 2000)
	for i := range recs {
		recs[i] = tracev2.Record{RequestID: int64(i), InputTokens: 300, OutputTokens: 100, Status: "ok",
			ArrivalTimeUs: int64(i) * 20_000, SendTimeUs: int64(i) * 20_000}
	}
	for _, instances := range []int{1, 3} {
		cfg := deploy.Default()
		cfg.Instances = instances
		dep, err := deploy.Resolve(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		seen := map[int64]int{}
		sink := func(rec *tracev2.Record, _ *tracev2.SimResult) error {
			seen[rec.RequestID]++
			if len(seen) == 100 {
				cancel()
			}
			return nil
		}
		tr, err := NewTrace(recs, TraceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := Simulate(ctx, Config{Deploy: dep}, tr, nil, sink)
		tr.Close()
		if !errors.Is(err, context.Canceled) || !out.Interrupted {
			t.Fatalf("%d instances: err %v, interrupted %v; want context.Canceled and true", instances, err, out.Interrupted)
		}
		s := out.Summary
		if s.InjectedRequests <= 100 || s.InjectedRequests >= int64(len(recs)) || int(s.InjectedRequests) != len(seen) {
			t.Errorf("%d instances: injected %d, %d requests reached the sink; want the same, above 100 and below %d",
				instances, s.InjectedRequests, len(seen), len(recs))
		}
		if s.CompletedRequests != s.InjectedRequests || s.StillQueued != 0 || s.StillRunning != 0 {
			t.Errorf("%d instances: completed %d, queued %d, running %d of %d injected: the requests in flight must end",
				instances, s.CompletedRequests, s.StillQueued, s.StillRunning, s.InjectedRequests)
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("request %d reached the sink %d times", id, n)
			}
		}
	}
}
