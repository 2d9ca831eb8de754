package instance

import (
	"reflect"
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

// TestCut: every live request is stopped at once, running ones too, its
// KV freed, and handed back as new; resubmitted elsewhere it runs as a
// fresh request would.
func TestCut(t *testing.T) {
	for _, async := range []bool{false, true} {
		testCut(t, async)
	}
}

func testCut(t *testing.T, async bool) {
	cfg := baseConfig()
	cfg.MaxNumSeqs, cfg.AsyncScheduling = 1, async
	h := newHarness(t, cfg, fake.Linear{Base: 100, Queue: 30})
	for i := range 4 {
		h.at(&Request{ID: int64(i + 1), ArrivalUs: int64(i * 10), Prompt: tokens(8, int32(100*i)), OutputLen: 3, DeadlineUs: 1_000_000, Tag: i})
	}
	var back []*Request
	// At 45 µs request 1 runs (its first step ends at 130), 2 waits, 3 and 4 are pending.
	h.eng.Schedule(45, des.PrioInstanceArrival, func(int64, any) {
		h.in.Cut(func(r *Request) { back = append(back, r) })
	}, nil)
	h.run()
	ids := []int64{}
	for _, r := range back {
		ids = append(ids, r.ID)
		if r.Status() != StatusNew || r.timeoutH.Valid() || r.inst != nil || r.Progress() != 0 || r.Generated() != 0 ||
			r.Tag != int(r.ID-1) || r.DeadlineUs != 1_000_000 || len(r.Prompt) != 8 {
			t.Fatalf("request %d after Cut: %s, progress %d, tag %v", r.ID, r.Status(), r.Progress(), r.Tag)
		}
	}
	if !reflect.DeepEqual(ids, []int64{3, 4, 2, 1}) {
		t.Fatalf("async %v: cut %v, want pending 3, 4, queued 2, running 1", async, ids)
	}
	if len(h.results) != 0 || h.in.KV().Utilization() != 0 {
		t.Fatalf("results %v, KV utilisation %v after the cut, want none and 0", h.results, h.in.KV().Utilization())
	}
	if c := h.in.Counters(); c.Submitted != 0 || c.Completed != 0 {
		t.Fatalf("counters %+v, want nothing submitted", c)
	}
	if err := h.in.CheckKV(); err != nil {
		t.Fatal(err)
	}
	other := newHarness(t, baseConfig(), fake.Linear{Base: 100})
	fresh := newHarness(t, baseConfig(), fake.Linear{Base: 100})
	for _, hh := range []*harness{other, fresh} {
		r := back[3]
		if hh == fresh {
			r = &Request{ID: 1, ArrivalUs: 0, Prompt: tokens(8, 0), OutputLen: 3, DeadlineUs: 1_000_000, Tag: 0}
		}
		hh.eng.Schedule(h.eng.Now(), des.PrioInstanceArrival, func(int64, any) {
			if err := hh.in.Submit(r); err != nil {
				t.Fatal(err)
			}
		}, nil)
		hh.run()
	}
	if a, b := other.results[1], fresh.results[1]; a != b || a.Status != StatusCompleted || a.OutputTokens != 3 {
		t.Fatalf("cut request resubmitted: %+v, a fresh one: %+v", a, b)
	}
}

// TestRestartKeepsCallerFields: restart keeps every exported field.
func TestRestartKeepsCallerFields(t *testing.T) {
	r := &Request{}
	v := reflect.ValueOf(r).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); v.Type().Field(i).IsExported() {
			switch f.Kind() {
			case reflect.Int64, reflect.Int:
				f.SetInt(int64(i + 1))
			case reflect.String:
				f.SetString("x")
			case reflect.Bool:
				f.SetBool(true)
			case reflect.Slice:
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			case reflect.Interface:
				f.Set(reflect.ValueOf(i))
			default:
				t.Fatalf("field %s of kind %s: extend this test", v.Type().Field(i).Name, f.Kind())
			}
		}
	}
	want := *r
	r.progress, r.g, r.status = 5, 2, StatusRunning
	r.restart()
	if !reflect.DeepEqual(*r, want) {
		t.Fatalf("after restart %+v, want %+v", *r, want)
	}
}
