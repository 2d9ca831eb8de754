package httpload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// stubSender stamps sends and holds each request until released (or its
// context ends); instant senders answer at once.
type stubSender struct {
	instant bool
	release chan struct{} // closed: every held request finishes ok
	sent    chan int64    // job IDs as they are sent

	mu          sync.Mutex
	inFlight    int
	maxInFlight int
}

func newStub(instant bool) *stubSender {
	return &stubSender{instant: instant, release: make(chan struct{}), sent: make(chan int64, 1024)}
}

func (s *stubSender) Prepare(j Job) Prepared { return Prepared{Job: j} }

func (s *stubSender) Send(ctx context.Context, clock Clock, p Prepared) Result {
	r := Result{Job: p.Job, SendUS: clock.Now()}
	s.mu.Lock()
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	s.sent <- p.Job.ID
	if s.instant {
		r.Status, r.DoneUS = StatusOK, clock.Now()
		return r
	}
	select {
	case <-s.release:
		r.Status, r.DoneUS = StatusOK, clock.Now()
	case <-ctx.Done():
		r.fail(StatusError, "cancelled: "+causeText(ctx), clock)
	}
	return r
}

// waitSends reads n send notifications, or fails the test after a bound.
func (s *stubSender) waitSends(t *testing.T, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var ids []int64
	for range n {
		select {
		case id := <-s.sent:
			ids = append(ids, id)
		case <-ctx.Done():
			t.Fatalf("only %d of %d sends happened", len(ids), n)
		}
	}
	return ids
}

func jobsAt(offsets ...int64) func(func(Job) bool) {
	return func(yield func(Job) bool) {
		for i, at := range offsets {
			if !yield(Job{ID: int64(i), IntendedUS: at}) {
				return
			}
		}
	}
}

// runAsync runs a dispatcher and returns a channel with its outcome.
type outcome struct {
	stats   Stats
	err     error
	results []Result
}

func runAsync(ctx context.Context, d *Dispatcher, plan Plan) <-chan outcome {
	out := make(chan outcome, 1)
	go func() {
		var o outcome
		o.stats, o.err = d.Run(ctx, NewClock(time.Now()), plan, func(r Result) { o.results = append(o.results, r) })
		out <- o
	}()
	return out
}

func ids(rs []Result) []int64 {
	var out []int64
	for _, r := range rs {
		out = append(out, r.Job.ID)
	}
	slices.Sort(out)
	return out
}

func seq(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

func TestDispatchOpenLoopHasNoHiddenCap(t *testing.T) {
	s := newStub(false)
	d, err := NewDispatcher(s, DispatchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	offsets := make([]int64, 50)
	for i := range offsets {
		offsets[i] = int64(i) * 200 // 5,000 req/s
	}
	done := runAsync(context.Background(), d, Plan{Jobs: jobsAt(offsets...)})
	s.waitSends(t, 50) // all sent although none has finished
	close(s.release)
	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if s.maxInFlight != 50 {
		t.Errorf("max in flight %d, want 50", s.maxInFlight)
	}
	if got := ids(o.results); !slices.Equal(got, seq(50)) {
		t.Errorf("result ids %v, want each of 0..49 once", got)
	}
	if o.stats.Results != 50 || o.stats.Sent != 50 || o.stats.OK != 50 || o.stats.NotSent != 0 {
		t.Errorf("stats %+v", o.stats)
	}
	for _, r := range o.results {
		if r.SendUS < r.Job.IntendedUS {
			t.Errorf("job %d sent at %d before its time %d", r.Job.ID, r.SendUS, r.Job.IntendedUS)
		}
	}
}

func TestDispatchMaxConcurrencyRecordsTheWait(t *testing.T) {
	s := newStub(false)
	d, err := NewDispatcher(s, DispatchConfig{MaxConcurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	done := runAsync(context.Background(), d, Plan{Jobs: jobsAt(0, 0, 0, 0, 0)})
	first := s.waitSends(t, 2)
	select {
	case id := <-s.sent:
		t.Fatalf("job %d sent while 2 were in flight with MaxConcurrency 2", id)
	default:
	}
	close(s.release)
	o := <-done
	if got := ids(o.results); !slices.Equal(got, seq(5)) {
		t.Fatalf("result ids %v, want 0..4", got)
	}
	if s.maxInFlight != 2 || o.stats.MaxInFlight != 2 {
		t.Errorf("max in flight %d at the server, %d in the stats, want 2", s.maxInFlight, o.stats.MaxInFlight)
	}
	var firstDone int64 = 1 << 62
	for _, r := range o.results {
		if slices.Contains(first, r.Job.ID) {
			firstDone = min(firstDone, r.DoneUS)
		}
	}
	for _, r := range o.results {
		if slices.Contains(first, r.Job.ID) {
			continue
		}
		if r.SendUS < firstDone || r.LagUS() != r.SendUS || r.Job.IntendedUS != 0 {
			t.Errorf("job %d: sent at %d (lag %d) before a slot freed at %d, or its intended time %d was changed",
				r.Job.ID, r.SendUS, r.LagUS(), firstDone, r.Job.IntendedUS)
		}
		if o.stats.MaxLagUS < r.LagUS() {
			t.Errorf("max lag %d below job %d's lag %d", o.stats.MaxLagUS, r.Job.ID, r.LagUS())
		}
	}
}

func TestClosedLoopThinksBetweenRequests(t *testing.T) {
	s := newStub(true)
	d, err := NewDispatcher(s, DispatchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	const users, perUser = 3, 4
	made := make([]int, users)
	var nextID int64
	plan, err := closedLoop(users, 3*time.Millisecond, func(u int) (Job, bool) {
		if made[u] == perUser {
			return Job{}, false
		}
		made[u]++
		nextID++
		return Job{ID: nextID*10 + int64(u), IntendedUS: -5}, true
	})
	if err != nil {
		t.Fatal(err)
	}
	o := <-runAsync(context.Background(), d, plan)
	if o.err != nil || len(o.results) != users*perUser {
		t.Fatalf("got %d results, error %v; want %d", len(o.results), o.err, users*perUser)
	}
	byUser := map[int][]Result{}
	for _, r := range o.results {
		u := int(r.Job.ID % 10)
		byUser[u] = append(byUser[u], r)
	}
	for u := range users {
		rs := byUser[u]
		if len(rs) != perUser {
			t.Fatalf("user %d: %d results, want %d", u, len(rs), perUser)
		}
		if want := int64(u) * 3000 / users; rs[0].Job.IntendedUS != want {
			t.Errorf("user %d: first job intended at %d, want %d", u, rs[0].Job.IntendedUS, want)
		}
		for k := 1; k < len(rs); k++ {
			if want := rs[k-1].DoneUS + 3000; rs[k].Job.IntendedUS != want || rs[k].SendUS < want {
				t.Errorf("user %d job %d: intended %d sent %d, want intended = previous done %d + think 3000",
					u, k, rs[k].Job.IntendedUS, rs[k].SendUS, rs[k-1].DoneUS)
			}
		}
	}
}

func TestFollowUpBeforeALaterPlannedJob(t *testing.T) {
	s := newStub(true)
	d, _ := NewDispatcher(s, DispatchConfig{})
	followed := false
	plan := Plan{
		Jobs: jobsAt(0, 40_000), // job 1 is due 40 ms in
		FollowUp: func(r Result) (Job, bool) {
			if followed {
				return Job{}, false
			}
			followed = true
			return Job{ID: 100, IntendedUS: r.DoneUS + 1000}, true
		},
	}
	o := <-runAsync(context.Background(), d, plan)
	order := s.waitSends(t, 3)
	if want := []int64{0, 100, 1}; !slices.Equal(order, want) || len(o.results) != 3 {
		t.Errorf("send order %v with %d results, want %v with 3", order, len(o.results), want)
	}
}

func TestDispatchCancelGivesEveryJobAResult(t *testing.T) {
	for _, drain := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint("drain ", drain), func(t *testing.T) {
			s := newStub(false)
			d, _ := NewDispatcher(s, DispatchConfig{Drain: drain})
			taken := 0
			jobs := func(yield func(Job) bool) {
				for i := range 20 {
					at := int64(0)
					if i >= 10 {
						at = int64(time.Hour / time.Microsecond)
					}
					taken++
					if !yield(Job{ID: int64(i), IntendedUS: at}) {
						return
					}
				}
			}
			followUps := 0
			ctx, cancel := context.WithCancelCause(context.Background())
			done := runAsync(ctx, d, Plan{Jobs: jobs, FollowUp: func(Result) (Job, bool) { followUps++; return Job{}, false }})
			s.waitSends(t, 10)
			cancel(errors.New("interrupted"))
			if drain > 0 {
				d.Abort() // a second interrupt
			}
			o := <-done
			if !errors.Is(o.err, context.Canceled) || !strings.Contains(o.err.Error(), "interrupted") || !o.stats.Interrupted {
				t.Errorf("error %v, interrupted %v; want the cause, and Interrupted", o.err, o.stats.Interrupted)
			}
			if got := ids(o.results); !slices.Equal(got, seq(taken)) {
				t.Fatalf("results for %v, want one for each of the %d jobs taken", got, taken)
			}
			if followUps != 0 {
				t.Errorf("FollowUp called %d times after the interrupt", followUps)
			}
			wantInFlight := "cancelled: interrupted; still in flight after the 0s drain"
			if drain > 0 {
				wantInFlight = "cancelled: interrupted; aborted"
			}
			for _, r := range o.results {
				want := wantInFlight
				if r.Job.ID >= 10 {
					want = "cancelled: interrupted (not sent)"
				}
				if r.Status != StatusError || r.Error != want || r.DoneUS == 0 {
					t.Errorf("job %d: %s %q (done %d), want error %q", r.Job.ID, r.Status, r.Error, r.DoneUS, want)
				}
			}
			if o.stats.Sent != 10 || o.stats.NotSent != int64(taken-10) || o.stats.Errors != int64(taken) {
				t.Errorf("stats %+v", o.stats)
			}
		})
	}
}

func TestDispatchDrainLetsRequestsFinish(t *testing.T) {
	s := newStub(false)
	d, _ := NewDispatcher(s, DispatchConfig{Drain: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(ctx, d, Plan{Jobs: jobsAt(0, 0, 0, 0, 0)})
	s.waitSends(t, 5)
	cancel()
	close(s.release) // they finish during the drain
	o := <-done
	if len(o.results) != 5 || o.stats.OK != 5 || !errors.Is(o.err, context.Canceled) {
		t.Errorf("%d results, %d ok, error %v; want 5 ok and context.Canceled", len(o.results), o.stats.OK, o.err)
	}
}

func TestDispatcherValidates(t *testing.T) {
	if _, err := NewDispatcher(nil, DispatchConfig{}); err == nil {
		t.Error("nil sender accepted")
	}
	if _, err := NewDispatcher(newStub(true), DispatchConfig{MaxConcurrency: -1}); err == nil {
		t.Error("negative concurrency accepted")
	}
	d, _ := NewDispatcher(newStub(true), DispatchConfig{})
	if _, err := d.Run(context.Background(), NewClock(time.Now()), Plan{}, func(Result) {}); err == nil {
		t.Error("plan without jobs accepted")
	}
	if _, err := d.Run(context.Background(), NewClock(time.Now()), Plan{Jobs: jobsAt(0)}, func(Result) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Run(context.Background(), NewClock(time.Now()), Plan{Jobs: jobsAt(0)}, func(Result) {}); err == nil {
		t.Error("second Run accepted")
	}
	if _, err := closedLoop(0, 0, func(int) (Job, bool) { return Job{}, false }); err == nil {
		t.Error("zero users accepted")
	}
}

func TestClock(t *testing.T) {
	origin := time.Now()
	c := NewClock(origin)
	if got := c.Stamp(origin.Add(-time.Second)); got != 1 {
		t.Errorf("instant before the origin stamped %d, want 1", got)
	}
	if got := c.Stamp(origin); got != 1 {
		t.Errorf("the origin stamped %d, want 1 (0 means never)", got)
	}
	if got := c.Stamp(origin.Add(1500 * time.Microsecond)); got != 1500 {
		t.Errorf("got %d, want 1500", got)
	}
	if got := c.At(2500); !got.Equal(origin.Add(2500 * time.Microsecond)) {
		t.Errorf("At(2500) = %v", got)
	}
}

// closedLoop drives the dispatcher's follow-ups in a test: the plan of
// virtual users, as a workload's closed loop would make it.
// closedLoop is the Plan of users virtual users who each send a job, wait
// for its Result, think, and send their next job: user u's first job is
// intended at u·think/users (all at 0 when think is 0), every later one at
// the previous job's DoneUS plus think, whatever its status (a closed loop
// holds its concurrency). next makes user u's next job, or returns false to
// end that user; the IntendedUS it sets is replaced. Job IDs must be unique
// among the jobs in flight.
func closedLoop(users int, think time.Duration, next func(user int) (Job, bool)) (Plan, error) {
	if users < 1 {
		return Plan{}, fmt.Errorf("httpload: closed loop: %d users; need at least 1", users)
	}
	if think < 0 {
		return Plan{}, fmt.Errorf("httpload: closed loop: think time %v is negative", think)
	}
	if next == nil {
		return Plan{}, errors.New("httpload: closed loop: nil job source")
	}
	thinkUS := think.Microseconds()
	var (
		mu    sync.Mutex
		owner = map[int64]int{} // job ID → user, for the jobs in flight
	)
	jobs := func(yield func(Job) bool) {
		for u := range users {
			j, ok := next(u)
			if !ok {
				continue
			}
			j.IntendedUS = int64(u) * thinkUS / int64(users)
			mu.Lock()
			owner[j.ID] = u
			mu.Unlock()
			if !yield(j) {
				return
			}
		}
	}
	follow := func(done Result) (Job, bool) {
		mu.Lock()
		u, ok := owner[done.Job.ID]
		delete(owner, done.Job.ID)
		mu.Unlock()
		if !ok {
			return Job{}, false
		}
		j, ok := next(u)
		if !ok {
			return Job{}, false
		}
		j.IntendedUS = done.DoneUS + thinkUS
		mu.Lock()
		owner[j.ID] = u
		mu.Unlock()
		return j, true
	}
	return Plan{Jobs: jobs, FollowUp: follow}, nil
}
