package httpload

import (
	"context"
	"fmt"
	"time"
)

// drain runs after the run's context is cancelled: jobs not yet sent get
// their Results at once, requests in flight may finish until the drain
// bound or Abort, and are then cancelled. It returns when no Result is
// owed any more.
func (r *run) drain(ctx context.Context, cancelReqs context.CancelCauseFunc) {
	r.stopped.Store(true)
	cause := context.Cause(ctx)
	notSent := func(j Job) {
		r.owed.Add(1)
		r.results <- Result{
			Job:    j,
			Status: StatusError,
			Error:  fmt.Sprintf("cancelled: %v (not sent)", cause),
			DoneUS: r.clock.Now(),
		}
	}
	for _, it := range r.waiting {
		notSent(it.job)
	}
	r.waiting = nil
	bound := time.NewTimer(r.d.cfg.Drain)
	defer bound.Stop()
	abort := r.d.abort // set to nil once used: a closed channel is always ready
	for {
		busy := r.owed.Load()
		// A follow-up asked for just before the interrupt is not sent either.
		for _, j := range r.fq.take() {
			notSent(j)
			busy++
		}
		if busy == 0 {
			return
		}
		select {
		case <-r.fq.notify:
		case <-bound.C:
			cancelReqs(fmt.Errorf("%v; still in flight after the %v drain", cause, r.d.cfg.Drain))
		case <-abort:
			abort = nil
			cancelReqs(fmt.Errorf("%v; aborted", cause))
		}
	}
}
