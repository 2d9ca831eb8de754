package fidelity

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"servesim/internal/tracev2"
)

// stepLog is a recorder holding the steps [start, end) given.
func stepLog(steps [][2]int64) *recorder {
	r := newRecorder(Universal{})
	r.Reset()
	for _, s := range steps {
		r.Event(s[0], 0)
		r.Add(s[1]-s[0], make([]float64, nu), 0)
	}
	return r
}

// TestQueuedScheduledAt checks where a request is queued and scheduled in
// vLLM's terms on a hand-made timeline: steps [0, 100), [100, 250), idle,
// [400, 500), [500, 600).
func TestQueuedScheduledAt(t *testing.T) {
	r := stepLog([][2]int64{{0, 100}, {100, 250}, {400, 500}, {500, 600}})
	for _, c := range []struct{ arrival, want int64 }{
		{0, 0},     // a step starts as it arrives: queued at that boundary
		{50, 100},  // mid-step: queued where the step ends
		{100, 100}, // at a boundary
		{249, 250},
		{250, 250}, // idle from 250 to 400: counted from the arrival
		{300, 300},
		{450, 500},
		{700, 700}, // after the last step
	} {
		if got := r.queuedAt(c.arrival); got != c.want {
			t.Errorf("queuedAt(%d) = %d, want %d", c.arrival, got, c.want)
		}
	}
	for _, c := range []struct{ first, queued, want int64 }{
		{100, 0, 0},     // first step right after the step in flight: formed when it started
		{250, 0, 100},   // queued in [0, 100), waited a step: formed when [100, 250) started
		{250, 100, 100}, // queued at 100
		{250, 200, 250}, // the step before began before the request was queued: no earlier than queued
		{400, 300, 400}, // the engine was idle: scheduled as its step starts
		{500, 400, 400},
	} {
		if got := r.scheduledAt(c.first, c.queued); got != c.want {
			t.Errorf("scheduledAt(%d, queued %d) = %d, want %d", c.first, c.queued, got, c.want)
		}
	}
}

// TestConcurrency: spans [0, 10), [5, 15), [10, 20): two open at most (one
// ends as the next starts), 30 µs of spans over 20 µs on average 1.5.
func TestConcurrency(t *testing.T) {
	mean, peak := concurrency([][2]int64{{0, 10}, {5, 15}, {10, 20}})
	if mean != 1.5 || peak != 2 {
		t.Errorf("got mean %v peak %d, want 1.5 and 2", mean, peak)
	}
	if mean, peak := concurrency(nil); mean != 0 || peak != 0 {
		t.Errorf("empty: got %v %d", mean, peak)
	}
}

// TestTimeseriesKVPeak reads the bench's timeseries.csv; an absent file or
// an empty column is "not recorded" (−1).
func TestTimeseriesKVPeak(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	head := "t,prompt_throughput,gen_throughput,running,waiting,kv_cache_pct\n"
	for _, c := range []struct {
		path string
		want float64
	}{
		{write("a.csv", head+"1.0,10,5,3,0,12.5\n2.0,0,9,4,1,99.96\n3.0,0,9,2,0,40\n"), 0.9996},
		{write("b.csv", head+"1.0,10,5,3,0,0.0\n"), -1},
		{filepath.Join(dir, "absent.csv"), -1},
	} {
		got, err := timeseriesKVPeak(c.path)
		if err != nil || math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: got %v, %v; want %v", filepath.Base(c.path), got, err, c.want)
		}
	}
	if _, err := timeseriesKVPeak(write("bad.csv", head+"1.0,10,5,3,0,x\n")); err == nil {
		t.Error("a malformed row: no error")
	}
}

// TestSourcesSelfConsistent: a run measured from the simulator itself is
// predicted without error in any part, and the parts add up.
func TestSourcesSelfConsistent(t *testing.T) {
	truth := Universal{HostStepUs: 800, HostSeqUs: 10}
	c := syntheticCase(t, truth)
	rp, err := c.simulate(context.Background(), truth)
	if err != nil {
		t.Fatal(err)
	}
	s := sources(c, rp)
	if s.N != len(c.Run.Records) || s.QueuedN+s.OtherN != s.N {
		t.Fatalf("compared %d (%d queued, %d others), want %d", s.N, s.QueuedN, s.OtherN, len(c.Run.Records))
	}
	for name, v := range map[string]float64{"queue err": s.QueueAbsErr, "first-token err": s.FirstAbsErr,
		"queued TTFT MAPE": s.QueuedTTFTMAPE, "others TTFT MAPE": s.OtherTTFTMAPE} {
		if v > 1e-9 {
			t.Errorf("%s: got %v, want 0", name, v)
		}
	}
	if s.RealQueueUs != s.SimQueueUs || s.RealFirstUs != s.SimFirstUs || math.Abs(s.RealTPOTUs-s.SimTPOTUs) > 1e-6*s.RealTPOTUs {
		t.Errorf("means differ: %+v", s)
	}
	if s.QueuedN == 0 || s.SimPeak < 2 || math.Abs(float64(s.RealPeak-s.SimPeak)) > 2 || math.Abs(s.RealBatch-s.SimBatch) > 0.05*s.SimBatch {
		t.Errorf("load: %+v", s)
	}
	if s.RealKVPeak != s.SimKVPeak || s.SimKVPeak <= 0 {
		t.Errorf("KV peak: real %v sim %v", s.RealKVPeak, s.SimKVPeak)
	}
}

// TestRegimes classes requests by what they met on a hand-made run: request
// 0 arrives alone (light); 1 and 2 arrive while 0 runs, 2 behind 1's wait
// (saturated: 1 was not yet scheduled); 3 arrives when 1 and 2 run (the
// peak batch is 3, and 2 is at least half of it: knee).
func TestRegimes(t *testing.T) {
	rec := func(id, send, last int64) tracev2.Record {
		return tracev2.Record{RequestID: id, SendTimeUs: send, FirstChunkTimeUs: send + 10, LastChunkTimeUs: last, Status: "ok"}
	}
	r := &Run{Records: []tracev2.Record{rec(0, 100, 1000), rec(1, 200, 2000), rec(2, 250, 2000), rec(3, 1200, 3000)},
		Scheduled: []int64{100, 300, 300, 1200}}
	want := []Regime{RegimeLight, RegimeLight, RegimeSaturated, RegimeKnee}
	if got := regimes(r); !reflect.DeepEqual(got, want) {
		t.Errorf("regimes %v, want %v", got, want)
	}
	r.Scheduled[3] = 0 // no schedule measured: unclassified
	if got := regimes(r)[3]; got != "" {
		t.Errorf("a request without a schedule is %q, want unclassified", got)
	}
}
