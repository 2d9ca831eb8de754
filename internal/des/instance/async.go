package instance

import "slices"

// Asynchronous scheduling (docs/simulator.md §8; vLLM's AsyncScheduler, on by
// default from vLLM 0.14).
//
// vLLM forms the batch of step N+1 as soon as step N is launched, while it
// runs, so the CPU work overlaps the GPU's. A request that reaches the
// scheduler while step N runs is therefore too late for step N+1, whose
// batch is already formed, and joins step N+2 at the earliest: at light
// load it waits about one step longer than with synchronous scheduling; in
// a closed loop (a capped client sends the next request right after a
// completion) every request does.
//
// The simulator forms a step's batch when the step starts. With
// asynchronous scheduling on, a request enqueued while a step runs is
// staged instead of entering the wait queue; when a step starts back to
// back with the one before (the engine was busy, and had work to carry
// over, so vLLM formed this batch when the previous step started), the
// requests enqueued by the previous step's start join the wait queue and
// the later ones stay staged. When the engine was idle, or carried nothing
// over, the batch is formed at the step's start and every staged request
// joins.
//
// What this leaves out: vLLM's step N+1 also reserves KV blocks and seats
// before step N's completions release theirs (they are freed when step N's
// output is processed); the simulator frees them at once. With a client
// capped at max_num_seqs the seat never binds; the blocks make a small
// difference only when the KV cache is the bottleneck.
type asyncState struct {
	on         bool
	staged     []*Request // enqueue order (= enqueue time order)
	head       int
	prevStart  int64 // start of the last step formed
	havePrev   bool
	vis, start int64 // (tests) the visibility time and start of the last step
}

func (a *asyncState) len() int { return len(a.staged) - a.head }

// stage holds r until the scheduler can see it.
func (a *asyncState) stage(r *Request) {
	if a.head > 0 && a.head == len(a.staged) {
		a.staged, a.head = a.staged[:0], 0
	}
	r.staged = true
	a.staged = append(a.staged, r)
}

// unstage removes a staged request (timed out before the scheduler saw it).
func (a *asyncState) unstage(r *Request) {
	i := slices.Index(a.staged[a.head:], r)
	if i < 0 {
		panic("instance: unstaging a request that is not staged")
	}
	a.staged = slices.Delete(a.staged, a.head+i, a.head+i+1)
	r.staged = false
}

// pending is the staged requests, in enqueue order.
func (a *asyncState) pending() []*Request { return a.staged[a.head:] }

// promote is called as a step starts at t: it moves the staged requests
// the scheduler had seen when it formed this step's batch into the wait
// queue.
func (in *Instance) promote(t int64) {
	a := &in.async
	vis := t
	if a.havePrev && t == in.busyUntil && (len(in.running) > 0 || in.wait.Len() > 0) {
		vis = a.prevStart // formed when the previous step started
	}
	a.prevStart, a.havePrev = t, true
	a.vis, a.start = vis, t
	for a.head < len(a.staged) {
		r := a.staged[a.head]
		if r.enqueueUs > vis {
			break
		}
		a.staged[a.head] = nil
		a.head++
		r.staged = false
		in.wait.push(r)
	}
}
