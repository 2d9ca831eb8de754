package cluster

import (
	"strings"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/sim"
	"servesim/internal/testkit/fake"
)

func smallInstances(n int) []instance.Config {
	var ics []instance.Config
	for i := 0; i < n; i++ {
		ics = append(ics, instance.Config{KV: kvcache.Config{Blocks: 64, BlockSize: 4}, MaxNumSeqs: 8,
			MaxNumBatchedTokens: 256, MaxModelLen: 128, Latency: &fake.Linear{Base: 100, PerPrefillToken: 1}, FastForward: true})
	}
	return ics
}

func runSmall(t *testing.T, cfg Config, reqs []*instance.Request) (map[int64]instance.Result, Outcome) {
	t.Helper()
	got := map[int64]instance.Result{}
	c, err := New(cfg, &sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) { got[res.ID] = *res }))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Run()
	if err != nil {
		t.Fatal(err)
	}
	return got, out
}

// TestTokenBucket: capacity 100 tokens, refill 10 tokens/s, requests of 60
// prompt tokens at 0, 0, 1 s and 5 s: the bucket holds 100, 40, 50, 90.
func TestTokenBucket(t *testing.T) {
	var reqs []*instance.Request
	for i, at := range []int64{0, 0, 1_000_000, 5_000_000} {
		reqs = append(reqs, &instance.Request{ID: int64(i + 1), ArrivalUs: at, Prompt: tokens(60, int32(100*i)), OutputLen: 1})
	}
	got, out := runSmall(t, Config{Instances: smallInstances(2), Admission: TokenBucket, BucketCapacity: 100, BucketRefillPerSec: 10}, reqs)
	want := []instance.Status{instance.StatusCompleted, instance.StatusRejected, instance.StatusRejected, instance.StatusCompleted}
	for i, w := range want {
		if r := got[int64(i+1)]; r.Status != w {
			t.Errorf("request %d: %s, want %s", i+1, r.Status, w)
		}
	}
	if r := got[2]; r.Instance != -1 || r.DoneUs != 0 || out.Rejected != 2 {
		t.Errorf("rejected result %+v, outcome rejected %d", r, out.Rejected)
	}
}

// TestRejectAllAndLatencies: reject-all refuses everything; admission and
// routing latencies delay the enqueue (scheduling delay 300 µs).
func TestRejectAllAndLatencies(t *testing.T) {
	reqs := func() []*instance.Request {
		return []*instance.Request{{ID: 1, Prompt: tokens(8, 1), OutputLen: 2}, {ID: 2, ArrivalUs: 10, Prompt: tokens(8, 50), OutputLen: 2}}
	}
	got, _ := runSmall(t, Config{Instances: smallInstances(2), Admission: RejectAll}, reqs())
	if got[1].Status != instance.StatusRejected || got[2].Status != instance.StatusRejected {
		t.Errorf("reject-all: %s, %s", got[1].Status, got[2].Status)
	}
	got, _ = runSmall(t, Config{Instances: smallInstances(2), AdmissionLatencyUs: 100, RoutingLatencyUs: 200}, reqs())
	for id, at := range map[int64]int64{1: 0, 2: 10} {
		r := got[id]
		if r.Status != instance.StatusCompleted || r.EnqueueUs != at+300 || r.SchedulingDelayUs != 300 || r.Instance != int(id-1) {
			t.Errorf("request %d: %+v, want enqueued at %d on instance %d", id, r, at+300, id-1)
		}
	}
	// A horizon inside the latencies leaves both requests with the cluster.
	cfg := Config{Instances: smallInstances(2), AdmissionLatencyUs: 100, RoutingLatencyUs: 200, HorizonUs: 150}
	got, out := runSmall(t, cfg, reqs())
	if got[1].Status != instance.StatusNew || got[2].Status != instance.StatusNew || out.Injected != 2 {
		t.Errorf("in transit at the horizon: %+v %+v (injected %d)", got[1], got[2], out.Injected)
	}
}

// TestConfigErrors: invalid configurations are refused with a clear message.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Instances = nil }, "no instances"},
		{func(c *Config) { c.Admission = "maybe" }, "unknown admission policy"},
		{func(c *Config) { c.Admission = TokenBucket }, "token bucket capacity"},
		{func(c *Config) { c.Routing = "closest" }, "unknown routing policy"},
		{func(c *Config) { c.Scorers = []Scorer{{ScorerQueueDepth, 1}} }, "need weighted"},
		{func(c *Config) { c.PD.PrefillInstances = 2 }, "P/D needs 1..1 prefill instances"},
		{func(c *Config) { c.PD = PD{PrefillInstances: 1} }, "positive transfer bandwidth"},
		{func(c *Config) { c.RoutingLatencyUs = -1 }, "must not be negative"},
	} {
		cfg := Config{Instances: smallInstances(2)}
		tc.mod(&cfg)
		_, err := New(cfg, &sim.SliceSource{}, sim.SinkFunc(func(*instance.Result, *instance.Request) {}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want it to mention %q", err, tc.want)
		}
	}
}
