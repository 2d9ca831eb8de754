package cluster

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/des"
	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/metrics"
	"servesim/internal/des/sim"
	"servesim/internal/testkit/fake"
)

func tokens(n int, base int32) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = base + int32(i)
	}
	return p
}

// randomInstance draws a small instance; tiny caches force preemption and
// P/D reservation failures.
func randomInstance(rng *rand.Rand, bs, t, m int) instance.Config {
	return instance.Config{
		KV:                  kvcache.Config{Blocks: t, BlockSize: bs},
		MaxNumSeqs:          1 + rng.IntN(8),
		MaxNumBatchedTokens: []int{1 + rng.IntN(16), 32, 2048}[rng.IntN(3)],
		MaxModelLen:         m,
		Scheduler:           []instance.Scheduler{instance.SchedFCFS, instance.SchedPriorityFCFS, instance.SchedSJF}[rng.IntN(3)],
		Latency: &fake.Linear{Base: 50 + rng.Int64N(300), PerPrefillToken: rng.Int64N(4), PerDecode: rng.Int64N(10),
			Queue: rng.Int64N(60), ATok: rng.Int64N(10), AEnd: rng.Int64N(20)},
	}
}

// randomCluster draws a cluster configuration exercising every policy.
func randomCluster(rng *rand.Rand) Config {
	n := 1 + rng.IntN(5)
	bs := []int{1, 2, 4, 8}[rng.IntN(4)]
	t := 4 + rng.IntN(40)
	m := max(2, min(t*bs, 16+rng.IntN(100)))
	cfg := Config{Seed: rng.Int64()}
	batching := instance.BatchVLLM
	if rng.IntN(3) == 0 {
		batching = instance.BatchingVariants()[rng.IntN(len(instance.BatchingVariants()))]
		if batching == instance.BatchLightLLM {
			t, bs = t*bs, 1
		}
	}
	stages := 0
	if batching == instance.BatchVLLM && rng.IntN(4) == 0 {
		stages = 2 + rng.IntN(2)
	}
	for i := 0; i < n; i++ {
		ic := randomInstance(rng, bs, t, m)
		ic.Batching, ic.ChunkSize = batching, 1+rng.IntN(64)
		if stages > 0 {
			ic.PipelineStages, ic.MaxNumSeqs, ic.StageSendUsPerToken = stages, max(ic.MaxNumSeqs, stages), 0.25
		}
		cfg.Instances = append(cfg.Instances, ic)
	}
	cfg.Admission = []AdmissionPolicy{AlwaysAdmit, TokenBucket, RejectAll, ""}[rng.IntN(4)]
	if rng.IntN(8) == 0 {
		cfg.Admission = RejectAll
	} else if cfg.Admission == RejectAll {
		cfg.Admission = AlwaysAdmit
	}
	cfg.BucketCapacity, cfg.BucketRefillPerSec = float64(20+rng.IntN(200)), float64(rng.IntN(20000))
	if rng.IntN(3) == 0 {
		cfg.AdmissionLatencyUs = rng.Int64N(500)
	}
	if rng.IntN(3) == 0 {
		cfg.RoutingLatencyUs = rng.Int64N(500)
	}
	cfg.Routing = RoutingPolicies()[rng.IntN(len(RoutingPolicies()))]
	if cfg.Routing == Weighted {
		for _, name := range ScorerNames() {
			if rng.IntN(2) == 0 {
				cfg.Scorers = append(cfg.Scorers, Scorer{Name: name, Weight: float64(1 + rng.IntN(4))})
			}
		}
	}
	cfg.SnapshotRefreshUs = []int64{0, 300, 5000}[rng.IntN(3)]
	cfg.CacheSignalDelayUs = []int64{0, 300, 5000}[rng.IntN(3)]
	if n >= 2 && rng.IntN(2) == 0 {
		cfg.PD = PD{PrefillInstances: 1 + rng.IntN(n-1), Decider: []Decider{DecideNever, DecideAlways, DecidePrefixThreshold}[rng.IntN(3)],
			PrefixThreshold: rng.IntN(20), BandwidthBytesPerUs: float64(10 + rng.IntN(1000)), BaseLatencyUs: rng.Int64N(100),
			Contention: rng.IntN(2) == 0, KVBytesPerToken: float64(1 + rng.IntN(200))}
	}
	if rng.IntN(5) == 0 {
		cfg.HorizonUs = 1 + rng.Int64N(30000)
	}
	if rng.IntN(3) == 0 {
		// Mixed hardware: each instance its own KV capacity (never below
		// what max_model_len needs), as pools on different GPUs have.
		for i := range cfg.Instances {
			cfg.Instances[i].KV.Blocks += rng.IntN(3 * t)
		}
	}
	if rng.IntN(3) == 0 {
		cfg.Encode = Encode{Instances: 1 + rng.IntN(3), MaxTokens: []int{0, 8, 20}[rng.IntN(3)],
			Latency: &fake.Linear{Base: 20 + rng.Int64N(200), PerPrefillToken: rng.Int64N(5)}}
	}
	if rng.IntN(2) == 0 {
		cfg.Gateway = randomGateway(rng, cfg.Admission == RejectAll, cfg.pdOn())
		if cfg.Admission != RejectAll && !cfg.Gateway.FlowControl && rng.IntN(2) == 0 {
			cfg.Admission = []AdmissionPolicy{TierShed, GAIELegacy}[rng.IntN(2)]
		}
	}
	if cfg.Gateway.FlowControl {
		cfg.Encode = Encode{} // the encode pool does not work with flow control
	}
	return cfg
}

// randomGateway draws tier-aware admission, budgets and flow control with
// every option; small capacities, thresholds and TTLs make every bucket
// (rejected, shed, expired, evicted, still in the queue) fill.
func randomGateway(rng *rand.Rand, rejectAll, pd bool) Gateway {
	g := Gateway{TierShedThreshold: rng.IntN(3), TierShedMinPriority: []int{-3, 0, 3, 4}[rng.IntN(4)],
		QDThreshold: []float64{0, 0.5, 2}[rng.IntN(3)], KVThreshold: []float64{0, 0.3, 1}[rng.IntN(3)]}
	if rng.IntN(3) == 0 {
		g.Priorities = map[string]int{"batch": 1 - rng.IntN(3)}
	}
	if rng.IntN(3) == 0 {
		g.TenantBudgets = map[string]float64{"a": float64(rng.IntN(3)) / 4, "b": 1}
	}
	if rejectAll || rng.IntN(4) == 0 {
		return g
	}
	g.FlowControl = true
	g.Detector = []string{"", DetectUtilization, DetectConcurrency, DetectNever}[rng.IntN(4)]
	g.MaxConcurrency = rng.IntN(6)
	g.DispatchOrder = []string{"", OrderFIFO, OrderPriority, OrderSLODeadline}[rng.IntN(4)]
	g.Fairness = []string{"", FairGlobalStrict, FairRoundRobin}[rng.IntN(3)]
	g.PerBandCapacity = []int{0, 2, 5}[rng.IntN(3)]
	g.MaxQueueDepth = []int{0, 3, 8}[rng.IntN(3)]
	g.QueueShedding = rng.IntN(2) == 0
	g.DispatchTickUs = []int64{0, 50, 700}[rng.IntN(3)]
	g.TTLUs = []int64{0, 0, 300, 4000}[rng.IntN(4)]
	g.InFlightEviction = !pd && rng.IntN(2) == 0
	if rng.IntN(2) == 0 {
		g.SLOTargetsUs = map[string]int64{"critical": 1 + rng.Int64N(2000), "standard": 1 + rng.Int64N(9000)}
	}
	return g
}

type wreq struct {
	id       int64
	at       int64
	prompt   []int32
	out      int
	maxOut   int
	deadline int64
	class    string
	media    int // image, audio and video tokens among the prompt's
	tenant   string
	target   int64
}

func randomWorkload(rng *rand.Rand, m int) []wreq {
	n := 3 + rng.IntN(40)
	prefixes := [][]int32{nil, tokens(rng.IntN(24), 5000), tokens(rng.IntN(40), 7000)}
	gap := []int64{0, 100, 1000, 10000}[rng.IntN(4)]
	var out []wreq
	var t int64
	for i := 0; i < n; i++ {
		if gap > 0 {
			t += rng.Int64N(gap)
		}
		p := append([]int32(nil), prefixes[rng.IntN(3)]...)
		p = append(p, tokens(1+rng.IntN(30), int32(100*i))...)
		if rng.IntN(25) == 0 {
			p = tokens(m+rng.IntN(4), 9000)
		}
		o := rng.IntN(25)
		w := wreq{id: int64(i + 1), at: t, prompt: p, out: o, maxOut: []int{0, o}[rng.IntN(2)],
			class:  []string{"", "critical", "batch", "sheddable", "background", "standard"}[rng.IntN(6)],
			tenant: []string{"", "a", "b"}[rng.IntN(3)], target: []int64{0, 500, 3000}[rng.IntN(3)]}
		if rng.IntN(6) == 0 {
			w.deadline = t + 1 + rng.Int64N(20000)
		}
		if rng.IntN(3) == 0 {
			w.media = 1 + rng.IntN(len(p))
		}
		out = append(out, w)
	}
	return out
}

func requests(ws []wreq) []*instance.Request {
	var rs []*instance.Request
	for _, w := range ws {
		rs = append(rs, &instance.Request{ID: w.id, ArrivalUs: w.at, Prompt: w.prompt, OutputLen: w.out,
			MaxOutputLen: w.maxOut, DeadlineUs: w.deadline, SLOClass: w.class, MediaTokens: w.media, Tenant: w.tenant, SLOTargetUs: w.target})
	}
	return rs
}

type runOut struct {
	results    map[int64]instance.Result
	order      []int64
	sum        metrics.Summary
	out        Outcome
	violations []string
	decisions  string
}

// simulate runs ws on cfg, checking after every event that time never
// decreases (INV-3), KV blocks are conserved on every instance (INV-4) and
// a wait queue never lacks a pending step (INV-8). followUps > 0 makes each
// completion of a request with id ≤ followUps inject one more request.
func simulate(cfg Config, ws []wreq, ff bool, followUps int64) runOut {
	var o runOut
	o.results = map[int64]instance.Result{}
	agg, _ := metrics.NewAggregator(nil)
	for i := range cfg.Instances {
		cfg.Instances[i].FastForward = ff
	}
	var dec strings.Builder
	cfg.Decisions = &dec
	var c *Cluster
	next := int64(len(ws)) + 1
	if followUps > 0 {
		cfg.MayInject = true
		cfg.OnDone = func(res *instance.Result, r *instance.Request) {
			if res.Status != instance.StatusCompleted || res.ID > followUps {
				return
			}
			f := &instance.Request{ID: next, ArrivalUs: res.ArrivalUs + res.E2EUs + 100, Prompt: r.Prompt, OutputLen: 3}
			next++
			if err := c.Inject(f); err != nil && err != sim.ErrPastHorizon {
				o.violations = append(o.violations, err.Error())
			}
		}
	}
	sink := sim.SinkFunc(func(res *instance.Result, r *instance.Request) {
		if _, dup := o.results[res.ID]; dup {
			o.violations = append(o.violations, fmt.Sprintf("request %d recorded twice", res.ID))
		}
		if res.ID != r.ID {
			o.violations = append(o.violations, fmt.Sprintf("result %d handed with request %d", res.ID, r.ID))
		}
		o.results[res.ID] = *res
		o.order = append(o.order, res.ID)
		agg.Add(res)
	})
	var err error
	c, err = New(cfg, &sim.SliceSource{Reqs: requests(ws)}, sink)
	if err != nil {
		o.violations = append(o.violations, err.Error())
		return o
	}
	last := int64(-1)
	c.Engine().SetObserver(func(at int64, _ int) {
		if at < last {
			o.violations = append(o.violations, fmt.Sprintf("INV-3: clock %d after %d", at, last))
		}
		last = at
		for _, in := range c.Instances() {
			if err := in.CheckKV(); err != nil {
				o.violations = append(o.violations, "INV-4: "+err.Error())
			}
			if in.QueueDepth() > 0 && !in.StepPending() {
				o.violations = append(o.violations, fmt.Sprintf("INV-8 at %d: instance %d has %d waiting, no step", at, in.ID(), in.QueueDepth()))
			}
		}
	})
	if c.pd != nil {
		c.pd.observe = pdChecker(c, &o.violations)
	}
	o.out, err = c.Run()
	if err != nil {
		o.violations = append(o.violations, err.Error())
		return o
	}
	o.sum = agg.Summary(o.out.Info)
	o.decisions = dec.String()
	o.out.Counters.FastSteps, o.out.Counters.LazySteps = 0, 0
	return o
}

// checkConservation is INV-1 at cluster level: every injected request lands
// in exactly one bucket, rejections and KV transfers included.
func checkConservation(o *runOut, cfg Config, injected int64) []string {
	var v []string
	s := o.sum
	if s.InjectedRequests != injected || int64(len(o.results)) != injected || o.out.Injected != injected {
		v = append(v, fmt.Sprintf("INV-1: %d results, summary injected %d, outcome %d, want %d", len(o.results), s.InjectedRequests, o.out.Injected, injected))
	}
	buckets := s.CompletedRequests + s.StillQueued + s.StillRunning + s.DroppedUnservable + s.TimedOutRequests + s.RejectedRequests + s.InTransferRequests +
		s.DroppedNoDecodeKV + s.EncodeRoutingRejections + s.GatewayQueueDepth + s.GatewayQueueShed + s.GatewayExpired + s.GatewayEvicted
	if buckets != s.InjectedRequests {
		v = append(v, fmt.Sprintf("INV-1: buckets sum to %d, injected %d (%+v)", buckets, s.InjectedRequests, s))
	}
	var encRejected int64
	for _, r := range o.results {
		if r.EncodeRejected {
			encRejected++
		}
	}
	if s.EncodeRoutingRejections != o.out.EncodeRejected || encRejected != o.out.EncodeRejected || (!cfg.Encode.on() && encRejected != 0) {
		v = append(v, fmt.Sprintf("encode rejections: summary %d, outcome %d, results %d (encode pool %+v)",
			s.EncodeRoutingRejections, o.out.EncodeRejected, encRejected, cfg.Encode))
	}
	if g := [4]int64{s.GatewayQueueDepth, s.GatewayQueueShed, s.GatewayExpired, s.GatewayEvicted}; g != [4]int64{o.out.GatewayQueued, o.out.Shed, o.out.Expired, o.out.Evicted} {
		v = append(v, fmt.Sprintf("gateway buckets: summary %v, outcome %+v", g, o.out))
	}
	if cfg.HorizonUs == 0 && s.GatewayQueueDepth != 0 {
		v = append(v, fmt.Sprintf("%d requests left in the gateway queue of an unbounded run", s.GatewayQueueDepth))
	}
	if s.RejectedRequests != o.out.Rejected {
		v = append(v, fmt.Sprintf("rejected: summary %d, outcome %d", s.RejectedRequests, o.out.Rejected))
	}
	// Under reject-all, a request is rejected or, at a horizon, still on
	// its way to admission (queued).
	if cfg.Admission == RejectAll && s.RejectedRequests+s.StillQueued != injected {
		v = append(v, fmt.Sprintf("reject-all rejected %d and holds %d of %d", s.RejectedRequests, s.StillQueued, injected))
	}
	if o.out.TransfersStarted != o.out.TransfersCompleted+o.out.TransfersInFlight {
		v = append(v, fmt.Sprintf("PD-3: %d started, %d completed, %d in flight", o.out.TransfersStarted, o.out.TransfersCompleted, o.out.TransfersInFlight))
	}
	if cfg.HorizonUs == 0 {
		for id, r := range o.results {
			if !r.Status.Terminal() || r.InTransfer {
				v = append(v, fmt.Sprintf("request %d live at the end of an unbounded run: %s", id, r.Status))
			}
		}
		if o.out.TransfersInFlight != 0 {
			v = append(v, fmt.Sprintf("%d transfers in flight at the end of an unbounded run", o.out.TransfersInFlight))
		}
	}
	for id, r := range o.results {
		if r.Status == instance.StatusCompleted && !(r.ArrivalUs <= r.EnqueueUs && r.EnqueueUs <= r.FirstScheduledUs &&
			r.FirstScheduledUs <= r.FirstTokenUs && r.FirstTokenUs <= r.DoneUs) {
			v = append(v, fmt.Sprintf("INV-5: request %d times %+v", id, r))
		}
	}
	return v
}

const propSeeds = 1000

// TestClusterInvariantsAndFastForward: over random clusters of every
// policy, every request is accounted once (INV-1 with rejections and
// transfers), the engine and KV invariants hold after every event, P/D
// invariants hold, and fast-forward changes nothing (results, decisions,
// totals) although instances run inline past each other's steps.
func TestClusterInvariantsAndFastForward(t *testing.T) {
	var inline, steps, transfers, rejected, encoded, encRejected int64
	var gw [4]int64 // shed, expired, evicted, in the queue at the end
	for seed := uint64(0); seed < propSeeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 21))
		cfg := randomCluster(rng)
		ws := randomWorkload(rng, cfg.Instances[0].MaxModelLen)
		fu := int64(0)
		if rng.IntN(4) == 0 {
			fu = int64(len(ws) / 2)
		}
		slow := simulate(cfg, ws, false, fu)
		quick := simulate(cfg, ws, true, fu)
		for _, o := range []*runOut{&slow, &quick} {
			injected := o.out.Injected
			if fu == 0 && cfg.HorizonUs == 0 && injected != int64(len(ws)) {
				t.Fatalf("seed %d: injected %d of %d", seed, injected, len(ws))
			}
			for _, v := range append(o.violations, checkConservation(o, cfg, injected)...) {
				t.Fatalf("seed %d (%d instances, %s/%s, pd %+v): %s", seed, len(cfg.Instances), cfg.Admission, cfg.routing(), cfg.PD, v)
			}
		}
		if !reflect.DeepEqual(slow.results, quick.results) {
			for id, a := range slow.results {
				if b := quick.results[id]; a != b {
					t.Fatalf("seed %d: request %d differs with fast-forward\n step %+v\n fast %+v", seed, id, a, b)
				}
			}
			t.Fatalf("seed %d: result sets differ", seed)
		}
		if slow.decisions != quick.decisions {
			t.Fatalf("seed %d: routing decisions differ with fast-forward", seed)
		}
		if !reflect.DeepEqual(slow.out, quick.out) {
			t.Fatalf("seed %d: outcomes differ\n%+v\n%+v", seed, slow.out, quick.out)
		}
		q := simulateCounters(cfg, ws, fu)
		inline += q.FastSteps
		steps += q.Steps
		transfers += quick.out.TransfersStarted
		rejected += quick.sum.RejectedRequests
		encoded += quick.out.Encoded
		encRejected += quick.sum.EncodeRoutingRejections
		gw[0] += quick.out.Shed
		gw[1] += quick.out.Expired
		gw[2] += quick.out.Evicted
		gw[3] += quick.out.GatewayQueued
	}
	t.Logf("gateway: %d shed, %d expired, %d evicted, %d in the queue at the horizon", gw[0], gw[1], gw[2], gw[3])
	for i, n := range gw {
		if n == 0 {
			t.Errorf("random clusters never fill gateway bucket %d (shed, expired, evicted, queued)", i)
		}
	}
	t.Logf("%d seeds: %d steps, %d run inline, %d KV transfers, %d rejected, %d encoded, %d rejected at the encode stage",
		propSeeds, steps, inline, transfers, rejected, encoded, encRejected)
	if inline == 0 || transfers == 0 || rejected == 0 || encoded == 0 || encRejected == 0 {
		t.Errorf("random clusters never run inline (%d), transfer (%d), reject (%d), encode (%d) or reject at the encode stage (%d)",
			inline, transfers, rejected, encoded, encRejected)
	}
}

func simulateCounters(cfg Config, ws []wreq, fu int64) instance.Counters {
	for i := range cfg.Instances {
		cfg.Instances[i].FastForward = true
	}
	c, err := New(cfg, &sim.SliceSource{Reqs: requests(ws)}, sim.SinkFunc(func(*instance.Result, *instance.Request) {}))
	if err != nil {
		return instance.Counters{}
	}
	out, _ := c.Run()
	return out.Counters
}

// TestDeterminismSeveralInstances: equal inputs and seed give identical
// results, decisions and result order (INV-6).
func TestDeterminismSeveralInstances(t *testing.T) {
	for seed := uint64(0); seed < 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		cfg := randomCluster(rng)
		ws := randomWorkload(rng, cfg.Instances[0].MaxModelLen)
		a, b := simulate(cfg, ws, true, 0), simulate(cfg, ws, true, 0)
		if !reflect.DeepEqual(a.results, b.results) || !reflect.DeepEqual(a.order, b.order) || a.decisions != b.decisions {
			t.Fatalf("seed %d: two runs differ", seed)
		}
	}
}

// pdChecker checks PD-1, PD-2 and PD-4 as disaggregated requests move.
func pdChecker(c *Cluster, v *[]string) func(rec *pdReq, ev string, now int64) {
	k := c.cfg.PD.PrefillInstances
	return func(rec *pdReq, ev string, now int64) {
		bad := func(f string, a ...any) {
			*v = append(*v, fmt.Sprintf("request %d %s: ", rec.parent.ID, ev)+fmt.Sprintf(f, a...))
		}
		switch ev {
		case "prefilled":
			if rec.pre < 0 || rec.pre >= k {
				bad("PD-2: prefill part on instance %d, prefill pool 0..%d", rec.pre, k-1)
			}
			if !(rec.parent.ArrivalUs <= rec.prefillEnqueue && rec.prefillEnqueue <= rec.prefillEnd) {
				bad("PD-4: arrival %d, prefill enqueue %d, prefill end %d", rec.parent.ArrivalUs, rec.prefillEnqueue, rec.prefillEnd)
			}
		case "transfer":
			if rec.dec < k {
				bad("PD-2: decode part on prefill instance %d", rec.dec)
			}
			if rec.xferStart < rec.prefillEnd {
				bad("PD-4: transfer starts %d before the prefill ends %d", rec.xferStart, rec.prefillEnd)
			}
		case "transferred":
			if rec.xferEnd < rec.xferStart {
				bad("PD-4: transfer ends %d before it starts %d", rec.xferEnd, rec.xferStart)
			}
		case "done":
			if rec.phase == phaseDecode {
				if rec.parent.Status() == instance.StatusCompleted && c.Now() < rec.xferEnd {
					bad("PD-1: completed at engine time %d before its transfer ended %d", c.Now(), rec.xferEnd)
				}
			}
		}
	}
}

// TestOneInstanceMatchesSim: a one-instance cluster with default policies
// gives exactly sim's results.
func TestOneInstanceMatchesSim(t *testing.T) {
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 77))
		bs := []int{1, 4, 16}[rng.IntN(3)]
		blocks := 4 + rng.IntN(60)
		m := min(64, blocks*bs)
		ic := randomInstance(rng, bs, blocks, m)
		ic.FastForward = true
		ws := randomWorkload(rng, m)
		want := map[int64]instance.Result{}
		s, err := sim.New(sim.Config{Instance: ic}, &sim.SliceSource{Reqs: requests(ws)},
			sim.SinkFunc(func(res *instance.Result, _ *instance.Request) { want[res.ID] = *res }))
		if err != nil {
			t.Fatal(err)
		}
		sout, err := s.Run()
		if err != nil {
			t.Fatal(err)
		}
		o := simulate(Config{Instances: []instance.Config{ic}}, ws, true, 0)
		if len(o.violations) > 0 {
			t.Fatal(o.violations[0])
		}
		if !reflect.DeepEqual(o.results, want) {
			t.Fatalf("seed %d: cluster of one differs from sim", seed)
		}
		if o.out.EndUs != sout.EndUs {
			t.Fatalf("seed %d: end %d, sim %d", seed, o.out.EndUs, sout.EndUs)
		}
	}
}

var _ = des.NoHorizon
