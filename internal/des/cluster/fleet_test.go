package cluster

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"servesim/internal/des/autoscale"
	"servesim/internal/des/instance"
	"servesim/internal/des/sim"
)

// fleetRun runs cfg and returns the results by id, the outcome and the cluster.
func fleetRun(t *testing.T, cfg Config, reqs []*instance.Request) (map[int64]instance.Result, Outcome, *Cluster) {
	t.Helper()
	got := map[int64]instance.Result{}
	c, err := New(cfg, &sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) {
		if _, dup := got[res.ID]; dup {
			t.Fatalf("request %d recorded twice", res.ID)
		}
		got[res.ID] = *res
	}))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Run()
	if err != nil {
		t.Fatal(err)
	}
	return got, out, c
}

func onePool(nodes, max int) []NodePool {
	return []NodePool{{Name: "h100", GPU: "H100", GPUsPerNode: 1, TP: 1, InitialNodes: nodes, MinNodes: 0, MaxNodes: max, CostPerHour: 3.6}}
}

// steady is n requests of 16 prompt tokens and 4 output tokens, one every gap µs from start.
func steady(n int, start, gap int64, firstID int64) []*instance.Request {
	var rs []*instance.Request
	for i := range n {
		rs = append(rs, &instance.Request{ID: firstID + int64(i), ArrivalUs: start + int64(i)*gap, Prompt: tokens(16, int32(1000*i)), OutputLen: 4})
	}
	return rs
}

// TestFixedFleetMatchesNoFleet: node pools without an autoscaler or
// lifecycle change no result.
func TestFixedFleetMatchesNoFleet(t *testing.T) {
	reqs := func() []*instance.Request { return steady(200, 0, 300, 1) }
	want, wout, _ := fleetRun(t, Config{Instances: smallInstances(3), Routing: LeastLoaded}, reqs())
	// Warm-up applies to replicas that load, not to those deployed at the start.
	life := Lifecycle{WarmUpRequests: 5, WarmUpFactor: 3}
	got, out, c := fleetRun(t, Config{Instances: smallInstances(3), Routing: LeastLoaded, Fleet: &Fleet{Pools: onePool(4, 4), Lifecycle: life}}, reqs())
	if !reflect.DeepEqual(got, want) || out.Counters != wout.Counters || out.EndUs != wout.EndUs {
		t.Fatalf("a fixed fleet changed the results (counters %+v, want %+v; end %d, want %d)", out.Counters, wout.Counters, out.EndUs, wout.EndUs)
	}
	rep := c.Fleet()
	// 4 nodes at $3.60/h for the run.
	if h := float64(out.EndUs) / 3.6e9; rep.GPUHours < 4*h*0.999 || rep.GPUHours > 4*h*1.001 || rep.Dollars < 3.6*rep.GPUHours*0.999 {
		t.Fatalf("GPU-hours %v dollars %v over %d µs, want %v and 3.6×", rep.GPUHours, rep.Dollars, out.EndUs, 4*h)
	}
	if rep.PeakReplicas != 3 || rep.Placed != 0 {
		t.Fatalf("peak %d placed %d, want 3 0", rep.PeakReplicas, rep.Placed)
	}
}

func scaler() *Autoscaler {
	a := DefaultAutoscaler()
	a.IntervalUs, a.UpWindowUs, a.DownWindowUs = 100_000, 0, 200_000
	a.Analyzer.AvgInputTokens = 16
	return &a
}

// TestAutoscalerFollowsLoad: a burst makes the fleet grow (each new
// replica after its loading delay), the quiet after it makes it shrink
// back to the minimum, and every request ends once.
func TestAutoscalerFollowsLoad(t *testing.T) {
	reqs := append(steady(20000, 0, 20, 1), steady(20, 1_000_000, 50_000, 100_000)...)
	cfg := Config{Instances: smallInstances(1), Fleet: &Fleet{Pools: onePool(1, 4), Autoscaler: scaler(),
		Lifecycle: Lifecycle{Loading: Delay{MeanUs: 50_000}}, ReportUs: 1_000_000}}
	got, out, c := fleetRun(t, cfg, reqs)
	if len(got) != len(reqs) || out.Injected != int64(len(reqs)) {
		t.Fatalf("%d results for %d requests", len(got), len(reqs))
	}
	rep := c.Fleet()
	if rep.Placed < 1 || rep.Removed < 1 || rep.PeakReplicas < 2 {
		t.Fatalf("placed %d removed %d peak %d: want growth then shrink (%+v)", rep.Placed, rep.Removed, rep.PeakReplicas, rep.Events)
	}
	last := map[int64]int{}
	for _, e := range rep.Events {
		if e.ActuatedUs != e.DecidedUs {
			t.Errorf("actuation delay 0 but decided %d actuated %d", e.DecidedUs, e.ActuatedUs)
		}
		if last[e.DecidedUs] != 0 {
			t.Errorf("two decisions at %d µs", e.DecidedUs)
		}
		last[e.DecidedUs] = e.Delta
	}
	for _, r := range c.fleet.reps[1:] {
		if r.inst >= 0 {
			for _, res := range got {
				if res.Instance == r.inst && res.EnqueueUs >= 0 && res.EnqueueUs < 50_000 {
					t.Errorf("instance %d took request %d at %d µs, before it loaded", r.inst, res.ID, res.EnqueueUs)
				}
			}
		}
	}
	if n := len(c.Instances()); n != 1+rep.Placed {
		t.Errorf("%d instances after %d placements", n, rep.Placed)
	}
}

// TestDrainFreesGPUsAfterInFlight: a replica drained with requests in
// flight takes no new request and gives its GPUs back exactly when its
// last request ends (wait), and a redirect moves its queue elsewhere.
func TestDrainFreesGPUsAfterInFlight(t *testing.T) {
	for _, pol := range []DrainPolicy{DrainWait, DrainRedirect} {
		t.Run(string(pol), func(t *testing.T) {
			ics := smallInstances(2)
			for i := range ics {
				ics[i].MaxNumSeqs = 1 // a queue builds
			}
			cfg := Config{Instances: ics, Fleet: &Fleet{Pools: onePool(2, 2), Lifecycle: Lifecycle{Drain: pol}}}
			reqs := steady(40, 0, 10, 1)
			got := map[int64]instance.Result{}
			c, err := New(cfg, &sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) { got[res.ID] = *res }))
			if err != nil {
				t.Fatal(err)
			}
			var inFlight int
			c.scheduleCluster(150, prioFleet, func(now int64, _ any) {
				c.cev.Pop()
				inFlight = c.load[1]
				c.fleet.remove(now, 0)
			}, nil)
			if _, err := c.Run(); err != nil {
				t.Fatal(err)
			}
			r := c.fleet.reps[1]
			if r.inst != 1 || r.state != repGone || r.drainUs != 150 || inFlight < 2 {
				t.Fatalf("replica %+v, %d in flight at the drain; want instance 1 drained at 150 with a queue", r, inFlight)
			}
			var lastDone int64
			moved := 0
			for _, res := range got {
				if res.Status != instance.StatusCompleted {
					t.Fatalf("request %d %s", res.ID, res.Status)
				}
				if res.Instance == 1 {
					lastDone = max(lastDone, res.DoneUs)
					if res.ArrivalUs > 150 {
						t.Errorf("request %d arrived at %d, after the drain, and went to the drained replica", res.ID, res.ArrivalUs)
					}
				} else if res.ID%2 == 0 && res.ArrivalUs < 150 {
					moved++ // round robin sent the even ids to instance 1
				}
			}
			if r.freeUs != lastDone || lastDone <= 150 {
				t.Fatalf("GPUs freed at %d, last request there ended at %d", r.freeUs, lastDone)
			}
			if n := c.fleet.nodes[1].free; n != 1 {
				t.Fatalf("node 1 has %d free GPUs after the drain, want 1", n)
			}
			if (pol == DrainRedirect) != (moved > 0) {
				t.Fatalf("%s: %d queued requests moved to instance 0", pol, moved)
			}
		})
	}
}

// TestLoadingAndWarmUp: cold-started replicas take nothing until loaded
// (what arrives before is refused), and their first requests are slower
// by the warm-up factor.
func TestLoadingAndWarmUp(t *testing.T) {
	reqs := steady(10, 0, 10_000, 1)
	life := Lifecycle{Loading: Delay{MeanUs: 25_000}, ColdStart: true, WarmUpRequests: 2, WarmUpFactor: 3}
	got, out, _ := fleetRun(t, Config{Instances: smallInstances(1), Fleet: &Fleet{Pools: onePool(1, 1), Lifecycle: life}}, reqs)
	base, _, _ := fleetRun(t, Config{Instances: smallInstances(1)}, steady(10, 0, 10_000, 1))
	for id := int64(1); id <= 10; id++ {
		g, b := got[id], base[id]
		switch {
		case id <= 3:
			if g.Status != instance.StatusRejected {
				t.Errorf("request %d at %d µs: %s, want rejected while loading", id, g.ArrivalUs, g.Status)
			}
		case id <= 5:
			if g.TTFTUs <= b.TTFTUs || g.TTFTUs < 2*b.TTFTUs {
				t.Errorf("warm-up request %d: TTFT %d, want ≥ 2× the warm %d", id, g.TTFTUs, b.TTFTUs)
			}
		default:
			if g.TTFTUs != b.TTFTUs {
				t.Errorf("request %d after warm-up: TTFT %d, want %d", id, g.TTFTUs, b.TTFTUs)
			}
		}
	}
	if out.Rejected != 3 {
		t.Errorf("rejected %d, want 3", out.Rejected)
	}
}

func TestFleetConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Fleet)
		want string
	}{
		{func(f *Fleet) { f.Pools = nil }, "no node pools"},
		{func(f *Fleet) { f.Pools[0].MaxNodes = 0 }, "≤ max"},
		{func(f *Fleet) { f.Pools[0].TP = 2 }, "hold TP 2"},
		{func(f *Fleet) { f.Pools[0].CostPerHour = -1 }, "cost per hour"},
		{func(f *Fleet) { f.Pools[0].InitialNodes, f.Pools[0].MinNodes = 1, 1 }, "hold 1 replicas, fewer than the 2"},
		{func(f *Fleet) { f.Lifecycle.Drain = "soon" }, `unknown drain policy "soon"`},
		{func(f *Fleet) { f.Lifecycle.WarmUpRequests, f.Lifecycle.WarmUpFactor = 1, 0.5 }, "warm-up factor"},
		{func(f *Fleet) { f.Autoscaler = scaler(); f.Autoscaler.IntervalUs = 0 }, "interval must be positive"},
		{func(f *Fleet) { f.Autoscaler = scaler(); f.Autoscaler.Analyzer.ScaleDownBoundary = 0.9 }, "scale-down boundary"},
	} {
		fl := &Fleet{Pools: onePool(2, 4)}
		tc.mod(fl)
		_, err := New(Config{Instances: smallInstances(2), Fleet: fl}, &sim.SliceSource{}, sim.SinkFunc(func(*instance.Result, *instance.Request) {}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want it to mention %q", err, tc.want)
		}
	}
}

// randomFleetConfig draws pools, lifecycle and autoscaler settings.
func randomFleetConfig(rng *rand.Rand) Config {
	ics := smallInstances(1 + rng.IntN(3))
	for i := range ics {
		ics[i].MaxNumSeqs = 1 + rng.IntN(4)
	}
	var pools []NodePool
	for p := range 1 + rng.IntN(3) {
		per := []int{1, 2, 4}[rng.IntN(3)]
		tp := []int{1, per}[rng.IntN(2)]
		pools = append(pools, NodePool{Name: fmt.Sprint("p", p), GPU: fmt.Sprint("G", p), GPUsPerNode: per, TP: tp,
			InitialNodes: len(ics), MinNodes: rng.IntN(2), MaxNodes: len(ics) + rng.IntN(4), CostPerHour: float64(rng.IntN(10)),
			Provision: Delay{MeanUs: rng.Int64N(5_000), StddevUs: rng.Int64N(1_000)}})
	}
	a := DefaultAutoscaler()
	a.IntervalUs = 500 + rng.Int64N(5_000)
	a.UpWindowUs, a.DownWindowUs = rng.Int64N(10_000), rng.Int64N(10_000)
	a.ActuationDelayUs, a.ScrapeIntervalUs = rng.Int64N(2_000), rng.Int64N(3_000)
	a.Analyzer = autoscale.Analyzer{KVCacheThreshold: 0.5 + rng.Float64()/2, ScaleUpThreshold: 0.3 + rng.Float64()*0.7,
		AvgInputTokens: float64(16 + rng.IntN(64))}
	a.Analyzer.ScaleDownBoundary = a.Analyzer.ScaleUpThreshold * (0.1 + 0.8*rng.Float64())
	return Config{Instances: ics, Seed: rng.Int64(), Routing: RoutingPolicies()[rng.IntN(4)], RoutingLatencyUs: rng.Int64N(2) * 50,
		Fleet: &Fleet{Pools: pools, Autoscaler: &a, Lifecycle: Lifecycle{Loading: Delay{MeanUs: rng.Int64N(5_000), StddevUs: rng.Int64N(1_000)},
			WarmUpRequests: rng.IntN(3), WarmUpFactor: 1 + rng.Float64(), Drain: []DrainPolicy{DrainWait, DrainRedirect, DrainImmediate}[rng.IntN(3)],
			ColdStart: rng.IntN(4) == 0}, ReportUs: 1_000_000}}
}

// TestRandomFleetsInvariants: over random fleets and workloads, every
// request ends exactly once (conservation with the rejected bucket),
// GPUs are conserved on every node, a freed replica holds no request, no
// tick decides up and down, and a run is deterministic.
func TestRandomFleetsInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var cuts int64
	defer func() {
		if cuts == 0 && !t.Failed() {
			t.Errorf("no immediate drain cut a request: the cut bucket went untested")
		}
	}()
	for k := range 150 {
		cfg := randomFleetConfig(rng)
		ws := randomWorkload(rng, 128)
		ws = append(ws, randomWorkload(rng, 128)...)
		var at int64
		gap := []int64{100, 300, 3000}[rng.IntN(3)]
		for i := range ws {
			at += rng.Int64N(gap)
			ws[i].id, ws[i].at = int64(i+1), at
			if ws[i].deadline > 0 {
				ws[i].deadline = at + 1 + rng.Int64N(20000)
			}
		}
		got, out, c := fleetRun(t, cfg, requests(ws))
		if len(got) != len(ws) || out.Injected != int64(len(ws)) {
			t.Fatalf("case %d: %d results, %d injected, %d requests", k, len(got), out.Injected, len(ws))
		}
		var rejected int64
		for _, r := range got {
			if r.Status == instance.StatusRejected {
				rejected++
			}
		}
		if rejected != out.Rejected {
			t.Fatalf("case %d: %d rejected results, outcome says %d", k, rejected, out.Rejected)
		}
		if rep := c.Fleet(); rep.CutRejected > rep.Cut || rep.CutRejected > out.Rejected || (cfg.Fleet.Lifecycle.Drain != DrainImmediate && rep.Cut != 0) {
			t.Fatalf("case %d: %d cut, %d of them rejected, %d rejected in all (drain %s)", k, rep.Cut, rep.CutRejected, out.Rejected, cfg.Fleet.Lifecycle.Drain)
		}
		cuts += c.Fleet().Cut
		f := c.fleet
		held := make([]int, len(f.nodes))
		for _, r := range f.reps {
			if r.state != repGone {
				held[r.node] += f.cfg.Pools[r.pool].TP
			} else if r.inst >= 0 && c.load[r.inst] != 0 {
				t.Fatalf("case %d: replica %+v freed with %d requests", k, r, c.load[r.inst])
			}
			if r.freeUs >= 0 && r.drainUs >= 0 && r.freeUs < r.drainUs {
				t.Fatalf("case %d: replica %+v freed before its drain", k, r)
			}
		}
		for j, n := range f.nodes {
			if tot := f.cfg.Pools[n.pool].GPUsPerNode; n.free+held[j] != tot || n.gone && held[j] != 0 {
				t.Fatalf("case %d: node %d: %d free + %d held ≠ %d (gone %v)", k, j, n.free, held[j], tot, n.gone)
			}
		}
		seen := map[int64]bool{}
		for _, e := range c.Fleet().Events {
			if seen[e.DecidedUs] {
				t.Fatalf("case %d: two decisions at %d", k, e.DecidedUs)
			}
			seen[e.DecidedUs] = true
		}
		again, out2, c2 := fleetRun(t, cfg, requests(ws))
		if !reflect.DeepEqual(got, again) || out.EndUs != out2.EndUs || !reflect.DeepEqual(c.Fleet(), c2.Fleet()) {
			t.Fatalf("case %d: two runs differ", k)
		}
	}
}

// TestImmediateDrain: an immediate drain gives the GPUs back at the drain
// itself; every request the replica held (running ones too) is cut and
// served from scratch by the replica that stays, and with none left it is
// rejected, in the cut bucket.
func TestImmediateDrain(t *testing.T) {
	for _, n := range []int{2, 1} {
		ics := smallInstances(n)
		for i := range ics {
			ics[i].MaxNumSeqs = 1 // a queue builds
		}
		cfg := Config{Instances: ics, Fleet: &Fleet{Pools: onePool(n, n), Lifecycle: Lifecycle{Drain: DrainImmediate}}}
		got := map[int64]instance.Result{}
		c, err := New(cfg, &sim.SliceSource{Reqs: steady(40, 0, 10, 1)}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) { got[res.ID] = *res }))
		if err != nil {
			t.Fatal(err)
		}
		var inFlight int
		var before map[int64]bool
		c.scheduleCluster(150, prioFleet, func(now int64, _ any) {
			c.cev.Pop()
			inFlight = c.load[n-1]
			before = map[int64]bool{}
			for id := range got {
				before[id] = true
			}
			c.fleet.remove(now, 0)
		}, nil)
		out, err := c.Run()
		if err != nil {
			t.Fatal(err)
		}
		r, rep := c.fleet.reps[n-1], c.Fleet()
		if r.state != repGone || r.drainUs != 150 || r.freeUs != 150 || c.fleet.nodes[n-1].free != 1 || c.load[n-1] != 0 {
			t.Fatalf("n=%d: replica %+v, node free %d, load %d: want GPUs back at 150", n, r, c.fleet.nodes[n-1].free, c.load[n-1])
		}
		if inFlight < 2 || rep.Cut != int64(inFlight) {
			t.Fatalf("n=%d: %d in flight at the drain, %d cut", n, inFlight, rep.Cut)
		}
		cut, rejected := 0, int64(0)
		for id, res := range got {
			switch {
			case res.Status == instance.StatusRejected:
				rejected++
				if n != 1 || res.DoneUs < 150 {
					t.Errorf("n=%d: request %d rejected at %d", n, id, res.DoneUs)
				}
			case res.Status != instance.StatusCompleted:
				t.Errorf("n=%d: request %d %s", n, id, res.Status)
			case res.Instance == n-1 && !before[id] && res.DoneUs > 150:
				t.Errorf("n=%d: request %d finished at %d on the cut replica", n, id, res.DoneUs)
			case n == 2 && res.Instance == 0 && res.ID%2 == 0 && res.ArrivalUs <= 150:
				cut++ // round robin sent the even ids to instance 1
				if res.EnqueueUs < 150 {
					t.Errorf("request %d cut at 150 but enqueued at %d on instance 0", id, res.EnqueueUs)
				}
			}
		}
		if n == 2 && (cut != inFlight || rejected != 0 || rep.CutRejected != 0) {
			t.Fatalf("%d cut requests served by instance 0, %d rejected; want %d and 0", cut, rejected, inFlight)
		}
		// With no replica left, the cut ones and every later arrival are rejected.
		if n == 1 && (rep.CutRejected != int64(inFlight) || out.Rejected != rejected || rejected < int64(inFlight)) {
			t.Fatalf("cut rejected %d of %d in flight; %d rejected results, outcome %d", rep.CutRejected, inFlight, rejected, out.Rejected)
		}
		if len(got) != 40 {
			t.Fatalf("n=%d: %d results for 40 requests", n, len(got))
		}
	}
}

// TestPoolOwnInstances: a pool with a configuration of its own gives it
// to the replicas placed on it, the initial ones included, and the
// analyzer reads each replica's own KV capacity.
func TestPoolOwnInstances(t *testing.T) {
	big := smallInstances(1)[0]
	big.KV.Blocks, big.MaxNumSeqs = 128, 16
	pools := []NodePool{onePool(1, 1)[0], {Name: "a100", GPU: "A100-80", GPUsPerNode: 1, TP: 1, InitialNodes: 1, MaxNodes: 1, CostPerHour: 2, Instance: &big}}
	c, err := New(Config{Instances: smallInstances(2), Fleet: &Fleet{Pools: pools}}, &sim.SliceSource{}, sim.SinkFunc(func(*instance.Result, *instance.Request) {}))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := c.insts[0].KV().TotalBlocks(), c.insts[1].KV().TotalBlocks(); a != 64 || b != 128 {
		t.Fatalf("KV blocks %d and %d, want 64 (the cluster's) and 128 (the pool's)", a, b)
	}
	s := c.fleet.collect()
	if len(s.Replicas) != 2 || s.Replicas[0].KVCapacityTokens != 256 || s.Replicas[1].KVCapacityTokens != 512 ||
		s.Replicas[1].Variant.GPU != "A100-80" {
		t.Fatalf("signals %+v, want 256 and 512 KV tokens", s.Replicas)
	}
}
