package workload

import (
	"slices"
	"testing"
)

// TestShareSplitsTheRun: two sharded Sources of a closed loop (4 users, 40
// requests) each send their users (first requests k ≡ I mod 2) and report
// the others Elsewhere; their follow-ups take ids P + 2k + I and share the
// num_requests budget, so together they send exactly the 40 requests of one
// Source, ids 0..39, and each session stays on one worker.
func TestShareSplitsTheRun(t *testing.T) {
	w := mustResolve(t, Options{Concurrency: ptr(4), NumRequests: ptr(int64(40))})
	var ids []int64
	for i := range 2 {
		src := w.NewSource()
		src.Share(i, 2)
		var queue []*Request
		sessions := map[string]bool{}
		for r, ok := src.Next(); ok; r, ok = src.Next() {
			if r.ID%2 == int64(i) {
				queue = append(queue, r)
				sessions[r.SessionID] = true
			} else {
				src.Elsewhere(r.ID)
			}
		}
		for len(queue) > 0 {
			r := queue[0]
			queue = queue[1:]
			ids = append(ids, r.ID)
			if !sessions[r.SessionID] {
				t.Errorf("worker %d sends %s of session %s, which another worker started", i, r.SessionID, r.SessionID)
			}
			if next, ok := src.OnComplete(r.ID, r.ArrivalUs+1000, r.OutputTokens); ok {
				queue = append(queue, next)
			}
		}
		src.Finish()
		if c := src.Sessions(); c.Started != 2 || c.Active != 0 {
			t.Errorf("worker %d: sessions %+v, want its 2 users counted and ended", i, c)
		}
	}
	slices.Sort(ids)
	if len(ids) != 40 || ids[0] != 0 || ids[39] != 39 || len(slices.Compact(ids)) != 40 {
		t.Errorf("the two workers sent %d requests, ids %v..%v; want ids 0..39 once each", len(ids), ids[0], ids[len(ids)-1])
	}
}
