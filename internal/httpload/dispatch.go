package httpload

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"servesim/internal/httpload/alarm"
)

// Sender prepares and sends jobs; *Client is the real one.
type Sender interface {
	Prepare(Job) Prepared
	Send(ctx context.Context, clock Clock, p Prepared) Result
}

// DispatchConfig configures a Dispatcher. The zero value is an open loop
// with no drain.
type DispatchConfig struct {
	// MaxConcurrency caps the requests in flight; 0 = no cap (open loop).
	// A job held back by the cap keeps its intended time: its wait shows as
	// SendUS − IntendedUS and counts towards Late.
	MaxConcurrency int
	// Drain is how long in-flight requests may still finish after the run's
	// context is cancelled; then they are cancelled. 0 cancels them at once.
	Drain time.Duration
	// LateAfter is the lag beyond which a send counts as late. Default 1 ms.
	LateAfter time.Duration
}

// Plan is what a Dispatcher sends.
type Plan struct {
	// Jobs are sent at their IntendedUS, in the order given (they should be
	// in non-decreasing IntendedUS; an earlier time is simply overdue).
	Jobs iter.Seq[Job]
	// FollowUp, when set, is called with each finished Result; a returned
	// job is scheduled at its IntendedUS (closed loops, session rounds).
	// It is never called after the run's context is cancelled.
	FollowUp func(done Result) (Job, bool)
}

// Plan.Jobs and Plan.FollowUp run on different goroutines of the
// dispatcher, but never at the same time (run.planMu), so they may share
// unguarded state such as a workload source. The sink runs apart from both.

// Stats counts what a run did; every figure is also derivable from the
// Results. Lag percentiles are for the caller (Result.LagUS).
type Stats struct {
	Results  int64 // results delivered to the sink (= jobs taken from the plan)
	Sent     int64 // requests handed to the transport
	NotSent  int64 // jobs ended before sending (cancelled, or unbuildable)
	Late     int64 // sent more than LateAfter after their intended time
	MaxLagUS int64 // largest SendUS − IntendedUS
	// MaxInFlight is the most requests sent and not yet finished at once.
	MaxInFlight int64
	OK          int64
	Errors      int64 // status error (cancelled ones included)
	Timeouts    int64
	// Interrupted is set when the run's context was cancelled.
	Interrupted bool
}

// Dispatcher sends the jobs of one Plan at their intended times, one
// goroutine per request in flight, and delivers every Result to a sink.
type Dispatcher struct {
	sender Sender
	cfg    DispatchConfig

	abortOnce sync.Once
	abort     chan struct{}
	ran       atomic.Bool
}

// NewDispatcher validates cfg.
func NewDispatcher(s Sender, cfg DispatchConfig) (*Dispatcher, error) {
	if s == nil {
		return nil, errors.New("httpload: dispatcher: nil sender")
	}
	if cfg.MaxConcurrency < 0 || cfg.Drain < 0 || cfg.LateAfter < 0 {
		return nil, fmt.Errorf("httpload: dispatcher: max concurrency %d, drain %v and late-after %v must not be negative",
			cfg.MaxConcurrency, cfg.Drain, cfg.LateAfter)
	}
	if cfg.LateAfter == 0 {
		cfg.LateAfter = time.Millisecond
	}
	return &Dispatcher{sender: s, cfg: cfg, abort: make(chan struct{})}, nil
}

// Abort ends the drain at once: requests still in flight are cancelled. It
// is meant for a second interrupt and may be called at any time.
func (d *Dispatcher) Abort() { d.abortOnce.Do(func() { close(d.abort) }) }

// item is a job waiting for its send time.
type item struct {
	job      Job
	seq      int64 // arrival order in the queue, to break time ties
	prepared bool
	p        Prepared
}

// itemHeap orders waiting follow-up jobs by (IntendedUS, seq).
type itemHeap []*item

func (h itemHeap) Len() int { return len(h) }
func (h itemHeap) Less(i, j int) bool {
	if h[i].job.IntendedUS != h[j].job.IntendedUS {
		return h[i].job.IntendedUS < h[j].job.IntendedUS
	}
	return h[i].seq < h[j].seq
}
func (h itemHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *itemHeap) Push(x any)   { *h = append(*h, x.(*item)) }
func (h *itemHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// followQueue hands follow-up jobs from the collector to the dispatcher
// without ever blocking the collector.
type followQueue struct {
	mu     sync.Mutex
	jobs   []Job
	notify chan struct{} // capacity 1: "something changed"
}

func (q *followQueue) push(j Job) {
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.mu.Unlock()
}

func (q *followQueue) signal() {
	select {
	case q.notify <- struct{}{}:
	default:
	}
}

func (q *followQueue) take() []Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	jobs := q.jobs
	q.jobs = nil
	return jobs
}

// run is the state of one Run.
type run struct {
	d       *Dispatcher
	clock   Clock
	plan    Plan
	results chan Result
	fq      followQueue
	owed    atomic.Int64 // results launched or queued but not yet through the collector
	flying  atomic.Int64 // requests sent and not finished
	peak    atomic.Int64 // most of them at once
	stopped atomic.Bool  // the run's context was cancelled: no more follow-ups
	wg      sync.WaitGroup
	sem     chan struct{}
	planMu  sync.Mutex // serialises Plan.Jobs and Plan.FollowUp
	seq     int64
	waiting itemHeap
	stats   Stats
}

// Run sends the plan and calls sink with every Result as it finishes, from
// one goroutine at a time, in completion order. It returns when every job
// taken from the plan has had its Result delivered.
//
// When ctx is cancelled, Run stops taking jobs, gives each job still
// waiting for its send time a "cancelled: ... (not sent)" Result, lets the
// requests in flight finish for up to Drain (or until Abort), then cancels
// them, which ends them with "cancelled: ..." Results. It then returns the
// stats with an error wrapping ctx.Err() and context.Cause(ctx).
func (d *Dispatcher) Run(ctx context.Context, clock Clock, plan Plan, sink func(Result)) (Stats, error) {
	if plan.Jobs == nil || sink == nil {
		return Stats{}, errors.New("httpload: dispatcher: plan has no jobs or no sink")
	}
	if !d.ran.CompareAndSwap(false, true) {
		return Stats{}, errors.New("httpload: dispatcher: Run called twice")
	}
	r := &run{d: d, clock: clock, plan: plan, results: make(chan Result, 1024)}
	r.fq.notify = make(chan struct{}, 1)
	if d.cfg.MaxConcurrency > 0 {
		r.sem = make(chan struct{}, d.cfg.MaxConcurrency)
	}
	// Requests run on their own context so that an interrupt lets them
	// finish during the drain; cancelReqs ends them afterwards.
	reqCtx, cancelReqs := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelReqs(nil)

	collected := make(chan struct{})
	go r.collect(sink, collected)

	next, stop := iter.Pull(plan.Jobs)
	interrupted := r.dispatch(ctx, reqCtx, next)
	r.planMu.Lock()
	stop()
	r.planMu.Unlock()
	if interrupted {
		r.drain(ctx, cancelReqs)
	}
	r.wg.Wait()
	close(r.results)
	<-collected
	r.stats.Interrupted = interrupted
	r.stats.MaxInFlight = r.peak.Load()
	if interrupted {
		if cause := context.Cause(ctx); cause != ctx.Err() {
			return r.stats, fmt.Errorf("httpload: dispatch interrupted: %w: %w", ctx.Err(), cause)
		}
		return r.stats, fmt.Errorf("httpload: dispatch interrupted: %w", ctx.Err())
	}
	return r.stats, nil
}

// collect delivers results to the sink and asks for follow-ups.
func (r *run) collect(sink func(Result), done chan<- struct{}) {
	defer close(done)
	late := r.d.cfg.LateAfter.Microseconds()
	for res := range r.results {
		s := &r.stats
		s.Results++
		if res.Sent() {
			s.Sent++
			lag := res.LagUS()
			s.MaxLagUS = max(s.MaxLagUS, lag)
			if lag > late {
				s.Late++
			}
		} else {
			s.NotSent++
		}
		switch res.Status {
		case StatusOK:
			s.OK++
		case StatusTimeout:
			s.Timeouts++
		default:
			s.Errors++
		}
		sink(res)
		pushed := false
		if r.plan.FollowUp != nil && !r.stopped.Load() {
			r.planMu.Lock()
			j, ok := r.plan.FollowUp(res)
			r.planMu.Unlock()
			if ok {
				r.fq.push(j)
				pushed = true
			}
		}
		// Wake the dispatcher only when it has news: a follow-up to
		// schedule, or nothing owed any more (the end of the run or drain).
		if left := r.owed.Add(-1); pushed || left == 0 {
			r.fq.signal()
		}
	}
}

// dispatch is the send loop; it reports whether ctx was cancelled.
func (r *run) dispatch(ctx, reqCtx context.Context, next func() (Job, bool)) bool {
	var (
		head    *item // next job from the plan, not yet due
		srcDone bool
		timer   = alarm.New()
	)
	defer timer.Close()
	defer func() {
		if head != nil {
			r.waiting = append(r.waiting, head) // drain gives it its Result
		}
	}()
	for {
		if ctx.Err() != nil {
			return true
		}
		if head == nil && !srcDone {
			r.planMu.Lock()
			j, ok := next()
			r.planMu.Unlock()
			if ok {
				head = r.newItem(j)
			} else {
				srcDone = true
			}
		}
		busy := r.owed.Load() // read before taking follow-ups: see the end test below
		for _, j := range r.fq.take() {
			heap.Push(&r.waiting, r.newItem(j))
		}
		cur, fromHead := head, true
		if len(r.waiting) > 0 && (cur == nil || r.waiting[0].job.IntendedUS < cur.job.IntendedUS) {
			cur, fromHead = r.waiting[0], false
		}
		if cur == nil {
			// Nothing queued. The run is over when the plan is spent and no
			// result is owed: the collector pushes a result's follow-up
			// before it stops owing it, so none can be missed here.
			if srcDone && busy == 0 {
				// An interrupt that came after the check at the top but
				// before the last result still counts: the user asked to
				// stop before the run was over.
				return ctx.Err() != nil
			}
			select {
			case <-r.fq.notify:
			case <-ctx.Done():
			}
			continue
		}
		if !cur.prepared {
			cur.p, cur.prepared = r.d.sender.Prepare(cur.job), true
		}
		switch r.waitUntil(ctx, cur.job.IntendedUS, timer) {
		case waitCancelled:
			return true
		case waitWoken:
			continue // a follow-up may now come first
		}
		if r.sem != nil {
			select {
			case r.sem <- struct{}{}:
			case <-ctx.Done():
				return true
			}
		}
		if fromHead {
			head = nil
		} else {
			heap.Pop(&r.waiting)
		}
		r.launch(reqCtx, cur.p)
	}
}

func (r *run) newItem(j Job) *item {
	r.seq++
	return &item{job: j, seq: r.seq}
}

// launch sends one request on its own goroutine.
func (r *run) launch(reqCtx context.Context, p Prepared) {
	r.owed.Add(1)
	r.wg.Add(1)
	for n := r.flying.Add(1); ; {
		if old := r.peak.Load(); n <= old || r.peak.CompareAndSwap(old, n) {
			break
		}
	}
	go func() {
		defer r.wg.Done()
		res := r.d.sender.Send(reqCtx, r.clock, p)
		r.flying.Add(-1)
		if r.sem != nil {
			<-r.sem
		}
		r.results <- res
	}()
}

type waitOutcome int

const (
	waitDue waitOutcome = iota
	waitWoken
	waitCancelled
)

// waitUntil waits for the send time target (µs on the clock) on a precise
// timer (package alarm: no spinning, which would starve the network poller
// that the requests in flight read through). A new follow-up wakes it early,
// so that an earlier follow-up is not sent late.
func (r *run) waitUntil(ctx context.Context, target int64, timer *alarm.Timer) waitOutcome {
	for {
		rem := target - r.clock.elapsed()
		if rem <= 0 {
			return waitDue
		}
		select {
		case <-timer.Reset(time.Duration(rem) * time.Microsecond):
		case <-r.fq.notify:
			timer.Stop()
			return waitWoken
		case <-ctx.Done():
			timer.Stop()
			return waitCancelled
		}
	}
}
