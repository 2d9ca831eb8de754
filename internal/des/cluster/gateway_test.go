package cluster

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/sim"
)

// gatewayUnder builds a cluster of n small instances with cfg's gateway and
// freezes the signals routing (and so the saturation detector) reads at
// snap, so that the gateway's rules can be driven by hand. Results go to
// the returned map.
func gatewayUnder(t *testing.T, n int, cfg Config, snap signals) (*Cluster, map[int64]instance.Result) {
	t.Helper()
	cfg.Instances = smallInstances(n)
	cfg.SnapshotRefreshUs = 1 << 40
	got := map[int64]instance.Result{}
	c, err := New(cfg, &sim.SliceSource{}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) { got[res.ID] = *res }))
	if err != nil {
		t.Fatal(err)
	}
	if c.gw == nil {
		t.Fatal("no gateway")
	}
	for i := range c.gw.snap {
		c.gw.snap[i] = snap
	}
	c.gw.snapOK = true
	return c, got
}

func req(id int64, class, tenant string) *instance.Request {
	return &instance.Request{ID: id, Prompt: tokens(8, int32(100*id)), OutputLen: 2, SLOClass: class, Tenant: tenant}
}

// TestTierPriorities follows "SLO Tier Priorities" of BLIS's admission
// guide: critical 4, standard 3, batch −1, sheddable −2, background −3;
// empty and unknown classes are standard; overrides merge over the
// defaults; negative means sheddable.
func TestTierPriorities(t *testing.T) {
	def, over := newTiers(nil), newTiers(map[string]int{"batch": 0, "critical": 10})
	for _, tc := range []struct {
		class      string
		def, overr int
	}{
		{"critical", 4, 10}, {"standard", 3, 3}, {"batch", -1, 0}, {"sheddable", -2, -2},
		{"background", -3, -3}, {"", 3, 3}, {"gold", 3, 3},
	} {
		if got := def.priority(tc.class); got != tc.def {
			t.Errorf("default priority of %q: got %d, want %d", tc.class, got, tc.def)
		}
		if got := over.priority(tc.class); got != tc.overr {
			t.Errorf("overridden priority of %q: got %d, want %d", tc.class, got, tc.overr)
		}
	}
}

// TestSaturationFormula follows "GAIE-Legacy Admission" (Saturation
// Formula): the mean over instances of max(queue depth / QD threshold, KV
// utilisation / KV threshold), defaults QD 5 and KV 0.8. The requests the
// gateway sent to an instance since its snapshot count as queued there.
func TestSaturationFormula(t *testing.T) {
	for _, tc := range []struct {
		snaps []signals
		sent  []int
		qd    float64
		want  float64
	}{
		{[]signals{{queue: 5}, {queue: 0}}, nil, 0, 0.5},
		{[]signals{{queue: 1, kvUtil: 0.8}, {queue: 10, kvUtil: 0.4}}, nil, 0, (1 + 2) / 2.0},
		{[]signals{{queue: 2, kvUtil: 0.1}}, nil, 4, 0.5},
		{[]signals{{kvUtil: 0.4}, {kvUtil: 0.2}, {kvUtil: 0}}, nil, 0, (0.5 + 0.25) / 3},
		{[]signals{{queue: 2}, {kvUtil: 0.4}}, []int{3, 1}, 0, (1 + 0.5) / 2},
	} {
		c, _ := gatewayUnder(t, len(tc.snaps), Config{Admission: GAIELegacy, Gateway: Gateway{QDThreshold: tc.qd}}, signals{})
		copy(c.gw.snap, tc.snaps)
		copy(c.gw.sent, tc.sent)
		if got := c.gw.saturation(0); got < tc.want-1e-12 || got > tc.want+1e-12 {
			t.Errorf("%+v (QD %g): saturation %g, want %g", tc.snaps, tc.qd, got, tc.want)
		}
	}
}

// TestAdmissionRules: the decision rule of each tier-aware policy, by
// BLIS's admission guide. "Tier-Shed Admission": under overload (the
// busiest instance's queue + batch above the threshold) classes below the
// minimum priority are refused, all pass otherwise. "GAIE-Legacy
// Admission": non-sheddable always pass; sheddable are refused at
// saturation ≥ 1. The tenant budgets ("Per-tenant fair-share budgets" of
// the configuration reference) refuse only sheddable requests of a tenant
// at its share of max_num_seqs × instances.
func TestAdmissionRules(t *testing.T) {
	busy, idle := signals{queue: 3, batch: 2}, signals{}
	saturated, calm := signals{queue: 5}, signals{queue: 4, kvUtil: 0.79}
	for _, tc := range []struct {
		name     string
		cfg      Config
		snap     signals
		inFlight map[string]int
		class    string
		tenant   string
		want     string
	}{
		{"tier-shed busy batch", Config{Admission: TierShed, Gateway: Gateway{TierShedMinPriority: 3}}, busy, nil, "batch", "", "tier-shed"},
		{"tier-shed busy standard", Config{Admission: TierShed, Gateway: Gateway{TierShedMinPriority: 3}}, busy, nil, "standard", "", ""},
		{"tier-shed idle batch", Config{Admission: TierShed, Gateway: Gateway{TierShedMinPriority: 3}}, idle, nil, "batch", "", ""},
		{"tier-shed at threshold", Config{Admission: TierShed, Gateway: Gateway{TierShedMinPriority: 3, TierShedThreshold: 5}}, busy, nil, "batch", "", ""},
		{"tier-shed min 4 sheds standard", Config{Admission: TierShed, Gateway: Gateway{TierShedMinPriority: 4}}, busy, nil, "standard", "", "tier-shed"},
		{"tier-shed min -3 admits all", Config{Admission: TierShed, Gateway: Gateway{TierShedMinPriority: -3}}, busy, nil, "background", "", ""},
		{"gaie saturated sheddable", Config{Admission: GAIELegacy}, saturated, nil, "sheddable", "", "gaie-legacy"},
		{"gaie saturated critical", Config{Admission: GAIELegacy}, saturated, nil, "critical", "", ""},
		{"gaie saturated unknown class", Config{Admission: GAIELegacy}, saturated, nil, "gold", "", ""},
		{"gaie calm sheddable", Config{Admission: GAIELegacy}, calm, nil, "batch", "", ""},
		{"gaie promoted batch", Config{Admission: GAIELegacy, Gateway: Gateway{Priorities: map[string]int{"batch": 0}}}, saturated, nil, "batch", "", ""},
		// 2 instances × 8 seqs = 16 slots: a share of 0.25 is 4 slots.
		{"budget over, sheddable", Config{Gateway: Gateway{TenantBudgets: map[string]float64{"a": 0.25}}}, idle, map[string]int{"a": 4}, "batch", "a", "tenant-budget"},
		{"budget under, sheddable", Config{Gateway: Gateway{TenantBudgets: map[string]float64{"a": 0.25}}}, idle, map[string]int{"a": 3}, "batch", "a", ""},
		{"budget over, critical", Config{Gateway: Gateway{TenantBudgets: map[string]float64{"a": 0.25}}}, idle, map[string]int{"a": 9}, "critical", "a", ""},
		{"budget of another tenant", Config{Gateway: Gateway{TenantBudgets: map[string]float64{"a": 0}}}, idle, nil, "batch", "b", ""},
		{"budget zero", Config{Gateway: Gateway{TenantBudgets: map[string]float64{"a": 0}}}, idle, nil, "sheddable", "a", "tenant-budget"},
		{"flow control replaces tier-shed", Config{Admission: TierShed, Gateway: Gateway{FlowControl: true, TierShedMinPriority: 3}}, busy, nil, "batch", "", ""},
	} {
		c, _ := gatewayUnder(t, 2, tc.cfg, tc.snap)
		for k, v := range tc.inFlight {
			c.gw.tenantIn[k] = v
		}
		if got := c.gw.admit(0, req(1, tc.class, tc.tenant)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDispatchOrder follows "How It Works" and "SLO-Deadline Dispatch
// Ordering" of BLIS's flow control: fifo takes the earliest arrival of any
// band; priority the most urgent band first; slo-deadline orders a flow by
// enqueue + target (the request's, else its class's; none last, in
// arrival order); round-robin fairness serves a band's tenants in turn in
// sorted order, global-strict the earliest head.
func TestDispatchOrder(t *testing.T) {
	type in struct {
		class, tenant string
		at, target    int64
	}
	reqs := []in{
		{"batch", "b", 0, 0}, {"critical", "b", 1, 0}, {"standard", "a", 2, 900},
		{"critical", "a", 3, 0}, {"standard", "a", 4, 100}, {"critical", "b", 5, 0}, {"standard", "c", 6, 0},
	}
	targets := map[string]int64{"standard": 500}
	for _, tc := range []struct {
		order, fair string
		want        []int64
	}{
		{OrderFIFO, "", []int64{1, 2, 3, 4, 5, 6, 7}},
		{OrderPriority, FairGlobalStrict, []int64{2, 4, 6, 3, 5, 7, 1}},
		{OrderPriority, FairRoundRobin, []int64{4, 2, 6, 3, 7, 5, 1}},
		// standard: 3 due 902, 5 due 104, 7 due 506 (its class's target).
		{OrderSLODeadline, FairGlobalStrict, []int64{2, 4, 6, 5, 7, 3, 1}},
	} {
		cfg := Config{Gateway: Gateway{FlowControl: true, DispatchOrder: tc.order, Fairness: tc.fair, SLOTargetsUs: targets}}
		c, _ := gatewayUnder(t, 1, cfg, signals{queue: 100})
		for i, x := range reqs {
			r := req(int64(i+1), x.class, x.tenant)
			r.SLOTargetUs = x.target
			c.gw.enqueue(x.at, r)
		}
		var got []int64
		for c.gw.size > 0 {
			e := c.gw.next()
			c.gw.take(e)
			got = append(got, e.r.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s/%s: dispatched %v, want %v", tc.order, tc.fair, got, tc.want)
		}
	}
}

// TestQueueCapacity follows "Per-Band Capacity" and "Queue Shedding": a
// full band refuses (its entries share the arrival's priority); a full
// queue refuses unless queue shedding is on, which then sheds the newest
// entry of the least urgent sheddable band below the arrival's priority.
func TestQueueCapacity(t *testing.T) {
	for _, tc := range []struct {
		name    string
		g       Gateway
		classes []string
		want    map[int64]instance.Status // the requests that left the queue
	}{
		{"band full", Gateway{PerBandCapacity: 1}, []string{"batch", "critical", "batch"},
			map[int64]instance.Status{3: instance.StatusRejected}},
		{"queue full, no shedding", Gateway{MaxQueueDepth: 2}, []string{"batch", "batch", "critical"},
			map[int64]instance.Status{3: instance.StatusRejected}},
		{"queue full, shedding", Gateway{MaxQueueDepth: 3, QueueShedding: true}, []string{"background", "background", "sheddable", "critical"},
			map[int64]instance.Status{2: instance.StatusShed}},
		{"shedding spares equal priority", Gateway{MaxQueueDepth: 2, QueueShedding: true}, []string{"batch", "batch", "batch"},
			map[int64]instance.Status{3: instance.StatusRejected}},
		{"shedding spares non-sheddable", Gateway{MaxQueueDepth: 2, QueueShedding: true}, []string{"standard", "standard", "critical"},
			map[int64]instance.Status{3: instance.StatusRejected}},
	} {
		tc.g.FlowControl = true
		c, got := gatewayUnder(t, 1, Config{Gateway: tc.g}, signals{queue: 100})
		for i, class := range tc.classes {
			c.gw.enqueue(int64(i), req(int64(i+1), class, ""))
		}
		left := map[int64]instance.Status{}
		for id, r := range got {
			left[id] = r.Status
		}
		if !reflect.DeepEqual(left, tc.want) {
			t.Errorf("%s: %v left the queue, want %v", tc.name, left, tc.want)
		}
		if r, ok := got[3]; ok && r.Status == instance.StatusRejected && r.Refusal != "queue-full" {
			t.Errorf("%s: refusal %q, want queue-full", tc.name, r.Refusal)
		}
		if want := len(tc.classes) - len(tc.want); c.gw.size != want {
			t.Errorf("%s: %d wait, want %d", tc.name, c.gw.size, want)
		}
	}
}

// TestTTLAndEviction runs whole clusters: a request that waits in the
// queue past its TTL expires at the first tick after it; with in-flight
// eviction ("In-Flight Eviction" of BLIS's flow control), a saturated pool
// with a critical request waiting stops the newest-dispatched request of
// the lowest sheddable tier and dispatches the critical one.
func TestTTLAndEviction(t *testing.T) {
	long := func(id, at int64, class string) *instance.Request {
		return &instance.Request{ID: id, ArrivalUs: at, Prompt: tokens(8, int32(100*id)), OutputLen: 60, SLOClass: class}
	}
	// One request in flight saturates the pool (concurrency detector, 1).
	gw := Gateway{FlowControl: true, Detector: DetectConcurrency, MaxConcurrency: 1, TTLUs: 2500, DispatchTickUs: 1000}
	got, out := runSmall(t, Config{Instances: smallInstances(1), Gateway: gw},
		[]*instance.Request{long(1, 0, "standard"), long(2, 10, "standard")})
	if r := got[2]; r.Status != instance.StatusExpired || r.DoneUs != 3010 || out.Expired != 1 {
		t.Errorf("TTL: request 2 %s at %d (expired %d), want expired at the tick of 3010 µs", r.Status, r.DoneUs, out.Expired)
	}
	gw = Gateway{FlowControl: true, Detector: DetectConcurrency, MaxConcurrency: 2, InFlightEviction: true, DispatchTickUs: 1000}
	got, out = runSmall(t, Config{Instances: smallInstances(1), Gateway: gw},
		[]*instance.Request{long(1, 0, "batch"), long(2, 5, "background"), long(3, 20, "critical")})
	if got[2].Status != instance.StatusEvicted || got[2].DoneUs != 1020 || out.Evicted != 1 {
		t.Errorf("eviction: request 2 %s at %d, want evicted at the first tick (1020 µs)", got[2].Status, got[2].DoneUs)
	}
	if got[1].Status != instance.StatusCompleted || got[3].Status != instance.StatusCompleted || got[3].EnqueueUs < 1020 {
		t.Errorf("eviction: batch %s, critical %s enqueued at %d", got[1].Status, got[3].Status, got[3].EnqueueUs)
	}
}

// TestGatewayDeterminism: equal inputs give identical results and order
// with every gateway option drawn at random.
func TestGatewayDeterminism(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 28))
		cfg := randomCluster(rng)
		cfg.Gateway = randomGateway(rng, cfg.Admission == RejectAll, cfg.pdOn())
		if cfg.Gateway.FlowControl {
			cfg.Encode = Encode{} // the encode pool does not work with flow control
		}
		ws := randomWorkload(rng, cfg.Instances[0].MaxModelLen)
		a, b := simulate(cfg, ws, true, 0), simulate(cfg, ws, true, 0)
		if len(a.violations) > 0 {
			t.Fatalf("seed %d: %s", seed, a.violations[0])
		}
		if !reflect.DeepEqual(a.results, b.results) || !slices.Equal(a.order, b.order) || !reflect.DeepEqual(a.out, b.out) {
			t.Fatalf("seed %d: two runs differ", seed)
		}
	}
}

// TestTickSkipChangesNothing: ticks that cannot change anything (the
// detector's reading holds until its snapshot ages, TTL expiries aside)
// are skipped; over random clusters behind flow control every result and
// total equals that of ticking at every period.
func TestTickSkipChangesNothing(t *testing.T) {
	run := func(cfg Config, ws []wreq, noSkip bool) (map[int64]instance.Result, Outcome, int64) {
		got := map[int64]instance.Result{}
		c, err := New(cfg, &sim.SliceSource{Reqs: requests(ws)}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) { got[res.ID] = *res }))
		if err != nil {
			t.Fatal(err)
		}
		c.gw.noSkip = noSkip
		var events int64
		c.Engine().SetObserver(func(int64, int) { events++ })
		out, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		out.Counters.FastSteps, out.Counters.LazySteps = 0, 0
		return got, out, events
	}
	var skipped, waited int64
	for seed := uint64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 29))
		cfg := randomCluster(rng)
		if cfg.Admission == RejectAll {
			cfg.Admission = AlwaysAdmit
		}
		cfg.Gateway = randomGateway(rng, false, cfg.pdOn())
		cfg.Gateway.FlowControl, cfg.Gateway.Detector, cfg.Gateway.InFlightEviction = true, DetectUtilization, rng.IntN(4) == 0 && !cfg.pdOn()
		cfg.SnapshotRefreshUs = []int64{300, 5000}[rng.IntN(2)]
		cfg.Encode = Encode{} // the encode pool does not work with flow control
		ws := randomWorkload(rng, cfg.Instances[0].MaxModelLen)
		a, ao, an := run(cfg, ws, false)
		b, bo, bn := run(cfg, ws, true)
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(ao, bo) {
			for id, x := range b {
				if y := a[id]; x != y {
					t.Fatalf("seed %d: request %d differs when ticks are skipped\n every %+v\n skip  %+v", seed, id, x, y)
				}
			}
			t.Fatalf("seed %d: totals differ when ticks are skipped\n every %+v\n skip  %+v", seed, bo, ao)
		}
		skipped += bn - an
		waited += ao.Expired + ao.GatewayQueued
	}
	t.Logf("%d events skipped; %d requests expired or still queued", skipped, waited)
	if skipped == 0 {
		t.Error("no tick was ever skipped")
	}
}
