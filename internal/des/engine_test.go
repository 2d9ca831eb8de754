package des

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func TestOrderTimePrioritySeq(t *testing.T) {
	e := New()
	var got []string
	rec := func(name string) Action {
		return func(now int64, _ any) { got = append(got, name) }
	}
	e.Schedule(10, PrioStep, rec("step@10"), nil)
	e.Schedule(10, PrioArrival, rec("arrival@10"), nil)
	e.Schedule(5, PrioTimeout, rec("timeout@5"), nil)
	e.Schedule(10, PrioStep, rec("step2@10"), nil)
	e.Schedule(10, PrioQueued, rec("queued@10"), nil)
	end := e.Run(NoHorizon)
	want := []string{"timeout@5", "arrival@10", "queued@10", "step@10", "step2@10"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if end != 10 {
		t.Errorf("end: got %d, want 10", end)
	}
}

func TestCancelNeverMovesClock(t *testing.T) {
	e := New()
	ran := 0
	a := func(int64, any) { ran++ }
	e.Schedule(3, 0, a, nil)
	h := e.Schedule(100, 0, a, nil)
	if !e.Cancel(h) {
		t.Fatal("cancel of pending event: got false, want true")
	}
	if e.Cancel(h) {
		t.Error("second cancel: got true, want false")
	}
	end := e.Run(NoHorizon)
	if end != 3 || ran != 1 {
		t.Errorf("got end %d ran %d, want end 3 ran 1", end, ran)
	}
	// A handle whose slot was reused must not cancel the new event.
	h2 := e.Schedule(7, 0, a, nil)
	if e.Cancel(h) {
		t.Error("stale handle cancelled a reused slot")
	}
	if !e.Cancel(h2) {
		t.Error("fresh handle: got false, want true")
	}
}

func TestHorizon(t *testing.T) {
	e := New()
	n := 0
	a := func(int64, any) { n++ }
	e.Schedule(5, 0, a, nil)
	e.Schedule(50, 0, a, nil)
	if end := e.Run(10); end != 5 || n != 1 {
		t.Errorf("got end %d n %d, want 5 1", end, n)
	}
	if e.Pending() != 1 {
		t.Errorf("pending: got %d, want 1", e.Pending())
	}
}

func TestSchedulePastPanics(t *testing.T) {
	e := New()
	e.Schedule(10, 0, func(int64, any) {}, nil)
	e.Run(NoHorizon)
	defer func() {
		if recover() == nil {
			t.Error("scheduling into the past: no panic")
		}
	}()
	e.Schedule(9, 0, func(int64, any) {}, nil)
}

// TestRandomHeap checks against a sort: random schedules and cancellations
// must pop in (time, prio, seq) order and the clock never decreases.
func TestRandomHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		e := New()
		type ev struct {
			at   int64
			prio int
			seq  int
		}
		var handles []Handle
		var evs []ev
		cancelled := map[int]bool{}
		var got []int
		last := int64(-1)
		e.SetObserver(func(at int64, _ int) {
			if at < last {
				t.Fatalf("clock went back: %d after %d", at, last)
			}
			last = at
		})
		n := 1 + rng.IntN(60)
		for i := 0; i < n; i++ {
			i := i
			x := ev{at: rng.Int64N(20), prio: rng.IntN(9), seq: i}
			evs = append(evs, x)
			handles = append(handles, e.Schedule(x.at, x.prio, func(int64, any) { got = append(got, i) }, nil))
		}
		for i := 0; i < n/3; i++ {
			k := rng.IntN(n)
			if e.Cancel(handles[k]) {
				cancelled[k] = true
			}
		}
		e.Run(NoHorizon)
		var want []int
		for i := range evs {
			if !cancelled[i] {
				want = append(want, i)
			}
		}
		// insertion sort by key
		for i := 1; i < len(want); i++ {
			for j := i; j > 0; j-- {
				a, b := evs[want[j-1]], evs[want[j]]
				if a.at > b.at || (a.at == b.at && (a.prio > b.prio || (a.prio == b.prio && a.seq > b.seq))) {
					want[j-1], want[j] = want[j], want[j-1]
				}
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: got %d events, want %d", round, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("round %d: order got %v, want %v", round, got, want)
			}
		}
	}
}

func BenchmarkScheduleRun(b *testing.B) {
	e := New()
	a := func(int64, any) {}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e.Schedule(e.Now()+int64(i%7), i%9, a, nil)
		e.Schedule(e.Now()+int64(i%5), i%9, a, nil)
		e.Step(NoHorizon)
		e.Step(NoHorizon)
	}
}

// TestSubPriority: at equal time and priority a smaller sub-priority runs
// first whatever the scheduling order; Scheduled tracks pending events.
func TestSubPriority(t *testing.T) {
	e := New()
	var got []int
	rec := func(_ int64, d any) { got = append(got, d.(int)) }
	h3 := e.ScheduleSub(5, PrioStep, 3, rec, 3)
	e.ScheduleSub(5, PrioStep, 1, rec, 1)
	e.Schedule(5, PrioStep, rec, 0)
	e.ScheduleSub(5, PrioQueued, 9, rec, -1)
	e.ScheduleSub(5, PrioStep, 1, rec, 2)
	if !e.Scheduled(h3) {
		t.Fatal("Scheduled(pending) = false")
	}
	e.Run(NoHorizon)
	if want := []int{-1, 0, 1, 2, 3}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if e.Scheduled(h3) || e.Scheduled(Handle{}) {
		t.Error("Scheduled(run or zero handle) = true")
	}
	h := e.Schedule(9, 0, rec, 7)
	e.Cancel(h)
	if e.Scheduled(h) {
		t.Error("Scheduled(cancelled) = true")
	}
}
