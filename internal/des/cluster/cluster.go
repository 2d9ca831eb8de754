package cluster

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"servesim/internal/des"
	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/metrics"
	"servesim/internal/des/sim"
)

// Cluster is one run of N instances. Use New, then Run once.
type Cluster struct {
	cfg      Config
	eng      *des.Engine
	insts    []*instance.Instance
	src      sim.Source
	sink     sim.Sink
	horizon  int64
	injected int64
	rejected int64
	err      error
	ran      bool

	load    []int   // in-flight per instance: routed, not yet terminal there
	routed  []int64 // requests (and P/D parts) routed per instance
	rt      *router
	dec     *decisionLog
	bucket  bucket
	pools   [3][]int
	cev     des.TimeHeap[struct{}]         // times of the pending cluster events
	transit map[*instance.Request]struct{} // between arrival and instance, with latencies > 0
	pd      *pdState
	enc     *encodeState
	gw      *gateway // nil without tier-aware admission, budgets or flow control

	arrive, pull, admitAct des.Action
	instArrive             []des.Action
	gate                   *sim.Gate // the capped client; nil for an open loop
	ffBound                func() int64
	fleet                  *fleet // instances that come and go; nil for a fixed set
}

// New validates cfg and prepares a run.
func New(cfg Config, src sim.Source, sink sim.Sink) (*Cluster, error) {
	if src == nil || sink == nil {
		return nil, errors.New("cluster: nil source or sink")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := len(cfg.Instances)
	c := &Cluster{cfg: cfg, eng: des.New(), src: src, sink: sink, horizon: des.NoHorizon,
		load: make([]int, n), routed: make([]int64, n), transit: map[*instance.Request]struct{}{}}
	if cfg.HorizonUs > 0 {
		c.horizon = cfg.HorizonUs
	}
	// Inline steps stop at the next cluster event (and the instance's own
	// next event) unless a completion may create an event sooner.
	var bound func() int64
	switch {
	case !cfg.MayInject && !cfg.pdOn() && !cfg.Client.Capped():
		h := c.horizon
		if h != des.NoHorizon {
			h++
		}
		bound = func() int64 { return min(c.cevMin(), h) }
	case cfg.HorizonUs > 0:
		h := cfg.HorizonUs + 1
		bound = func() int64 { return min(c.eng.PeekTime(), h) }
	}
	c.ffBound = bound
	insts := cfg.Instances
	if cfg.Fleet != nil {
		c.fleet, insts = newFleet(c, insts)
	}
	pool := kvcache.NewPool() // one across instances and the router
	for i, ic := range insts {
		ic.ID = i
		ic.KV.Pool = pool
		ic.FastForwardBound = bound
		ic.OnDone = func(res *instance.Result, r *instance.Request) { c.done(i, res, r) }
		in, err := instance.New(c.eng, ic)
		if err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		c.insts = append(c.insts, in)
		c.instArrive = append(c.instArrive, func(now int64, data any) { c.onInstanceArrival(i, data) })
	}
	if cfg.pdOn() {
		k := cfg.PD.PrefillInstances
		for i := 0; i < n; i++ {
			if i < k {
				c.pools[poolPrefill] = append(c.pools[poolPrefill], i)
			} else {
				c.pools[poolDecode] = append(c.pools[poolDecode], i)
			}
		}
		c.pd = newPD(c, cfg.PD)
	} else {
		for i := 0; i < n; i++ {
			c.pools[poolAll] = append(c.pools[poolAll], i)
		}
	}
	if cfg.Encode.on() {
		c.enc = newEncode(c, cfg.Encode)
	}
	c.dec = newDecisionLog(cfg.Decisions)
	c.rt = newRouter(&c.cfg, c.insts, c.load, rand.New(rand.NewPCG(streamSeed(cfg.Seed, "router"), 0)), c.dec)
	if cfg.Admission == TokenBucket {
		c.bucket = bucket{level: cfg.BucketCapacity, capacity: cfg.BucketCapacity, rate: cfg.BucketRefillPerSec}
	}
	if cfg.needsGateway() {
		c.gw = newGateway(c)
	}
	c.arrive, c.pull, c.admitAct = c.onArrival, c.onSourceArrival, c.onAdmission
	if err := cfg.Client.Validate(); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if cfg.Client.Capped() {
		var err error
		c.gate, err = sim.NewGate(cfg.Client, c.enter, func(at int64, act des.Action, r *instance.Request) {
			c.scheduleCluster(at, des.PrioArrival, act, r)
		}, func() { c.cev.Pop() })
		if err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	}
	return c, nil
}

// streamSeed is seed XOR FNV-1a-64(name) (docs/simulator.md §1).
func streamSeed(seed int64, name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return uint64(seed) ^ h.Sum64()
}

// Engine exposes the engine (observers in tests).
func (c *Cluster) Engine() *des.Engine { return c.eng }

// Instances exposes the instances, in index order.
func (c *Cluster) Instances() []*instance.Instance { return c.insts }

// Now is the simulated time.
func (c *Cluster) Now() int64 { return c.eng.Now() }

// InFlight is the router's live in-flight count of instance i.
func (c *Cluster) InFlight(i int) int { return c.load[i] }

// scheduleCluster schedules a cluster event and remembers its time for the
// instances' fast-forward bound.
func (c *Cluster) scheduleCluster(at int64, prio int, act des.Action, data any) {
	c.eng.Schedule(at, prio, act, data)
	c.cev.Push(at, struct{}{})
}

// Inject schedules an extra request (a session's next round) to arrive at
// r.ArrivalUs, which must not lie before the current time. Requests past
// the horizon are refused with sim.ErrPastHorizon and never counted.
func (c *Cluster) Inject(r *instance.Request) error {
	if err := sim.CheckInject(r, c.eng.Now(), c.horizon, "cluster"); err != nil {
		return err
	}
	c.scheduleCluster(r.ArrivalUs, des.PrioArrival, c.arrive, r)
	return nil
}

func (c *Cluster) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// onArrival is the Arrival event: count the request, then admission after
// the admission latency (at once when it is 0).
func (c *Cluster) onArrival(now int64, data any) {
	c.cev.Pop()
	r := data.(*instance.Request)
	c.injected++
	if c.gate != nil {
		c.gate.Arrive(now, r)
		return
	}
	c.enter(now, r)
}

// enter is a request's arrival at the server side (for a capped client:
// when it is sent): admission after the admission latency.
func (c *Cluster) enter(now int64, r *instance.Request) {
	if c.cfg.AdmissionLatencyUs > 0 {
		c.transit[r] = struct{}{}
		c.scheduleCluster(now+c.cfg.AdmissionLatencyUs, des.PrioAdmission, c.admitAct, r)
		return
	}
	c.admission(now, r)
}

func (c *Cluster) onSourceArrival(now int64, data any) {
	c.onArrival(now, data)
	c.next()
}

func (c *Cluster) onAdmission(now int64, data any) {
	c.cev.Pop()
	r := data.(*instance.Request)
	delete(c.transit, r)
	c.admission(now, r)
}

// admission decides; an admitted request is routed at the same tick (its
// Routing event would run before anything but other admissions and
// routings, which it does not affect, so it runs inline). With flow
// control the gateway queue is the decision.
func (c *Cluster) admission(now int64, r *instance.Request) {
	if g := c.gw; g != nil && g.cfg.FlowControl {
		if why := g.admit(now, r); why != "" {
			c.refuse(now, r, instance.StatusRejected, why)
			return
		}
		g.enqueue(now, r)
		return
	}
	ok := true
	switch c.cfg.Admission {
	case RejectAll:
		ok = false
	case TokenBucket:
		ok = c.bucket.take(now, float64(len(r.Prompt)))
	}
	if !ok {
		c.refuse(now, r, instance.StatusRejected, "")
		return
	}
	if c.gw != nil {
		if why := c.gw.admit(now, r); why != "" {
			c.refuse(now, r, instance.StatusRejected, why)
			return
		}
	}
	if c.enc != nil && c.enc.admit(now, r) {
		return
	}
	c.route(now, r)
}

// refuse lets r go before it reaches an instance: rejected (why says by
// what; "" = the admission policy), shed or expired from the gateway queue.
func (c *Cluster) refuse(now int64, r *instance.Request, st instance.Status, why string) {
	res := instance.Refuse(r, now, st)
	res.Refusal = why
	reason := st.String()
	if st == instance.StatusRejected {
		c.rejected++
	}
	if c.cfg.Observer != nil {
		c.cfg.Observer.Refused(now, r, reason)
	}
	c.finish(&res, r)
}

// route sends an admitted request to its instance (or its P/D pools).
func (c *Cluster) route(now int64, r *instance.Request) {
	if c.gw != nil {
		c.gw.routed(r)
	}
	if c.pd != nil {
		c.pd.route(now, r)
		return
	}
	c.routeAll(now, r)
}

// routeAll sends a request to an instance of the whole pool; with none
// ready (a fleet still loading) it is refused.
func (c *Cluster) routeAll(now int64, r *instance.Request) {
	if len(c.pools[poolAll]) == 0 {
		res := instance.Reject(r, now)
		c.rejected++
		c.finish(&res, r)
		return
	}
	c.assign(now, r, c.rt.pick(now, r, c.pools[poolAll], poolAll), poolAll)
}

// assign sends r to instance i: in-flight counts it at once; it arrives
// after the routing latency.
func (c *Cluster) assign(now int64, r *instance.Request, i int, pool int) {
	c.load[i]++
	c.routed[i]++
	if c.gw != nil {
		c.gw.assigned(r, i)
	}
	if c.cfg.Observer != nil {
		c.cfg.Observer.Routed(now, r, i, poolNames[pool])
	}
	if c.cfg.RoutingLatencyUs > 0 {
		c.transit[r] = struct{}{}
		c.eng.ScheduleSub(now+c.cfg.RoutingLatencyUs, des.PrioInstanceArrival, i, c.instArrive[i], r)
		c.cev.Push(now+c.cfg.RoutingLatencyUs, struct{}{})
		return
	}
	c.submit(i, r)
}

func (c *Cluster) onInstanceArrival(i int, data any) {
	c.cev.Pop()
	r := data.(*instance.Request)
	delete(c.transit, r)
	if c.fleet != nil && c.fleet.gone(i) {
		c.fleet.reroute(c.eng.Now(), i, r) // its replica was cut away on the way
		return
	}
	c.submit(i, r)
}

func (c *Cluster) submit(i int, r *instance.Request) {
	if err := c.insts[i].Submit(r); err != nil {
		c.fail(fmt.Errorf("cluster: %w", err))
	}
}

// done receives every instance's terminal results.
func (c *Cluster) done(i int, res *instance.Result, r *instance.Request) {
	if c.cfg.Observer != nil {
		c.cfg.Observer.InstanceDone(i, res, r)
	}
	if c.pd != nil && c.pd.done(i, res, r) {
		return
	}
	c.load[i]--
	if c.fleet != nil {
		c.fleet.done(c.eng.Now(), i, res)
	}
	c.finish(res, r)
}

// finish hands a terminal result out.
func (c *Cluster) finish(res *instance.Result, r *instance.Request) {
	if c.gw != nil {
		c.gw.finished(r)
	}
	c.sink.Record(res, r)
	if c.gate != nil {
		c.gate.Done(res, r)
	}
	if c.cfg.OnDone != nil {
		c.cfg.OnDone(res, r)
	}
}

// next pulls one request from the source and schedules its arrival.
func (c *Cluster) next() {
	if c.err != nil {
		return
	}
	r, err := sim.Pull(c.src, c.eng.Now(), c.horizon, "cluster")
	if err != nil {
		c.fail(err)
	}
	if r != nil {
		c.scheduleCluster(r.ArrivalUs, des.PrioArrival, c.pull, r)
	}
}

// Outcome is what a run returns besides the streamed results.
type Outcome struct {
	EndUs    int64 // min(horizon, max(last event or step, last completion))
	Injected int64
	Rejected int64
	// The gateway's buckets: shed from its queue to make room, expired
	// there, evicted from an instance, and still waiting in it at the end.
	Shed, Expired, Evicted, GatewayQueued int64
	Counters                              instance.Counters // summed over instances (KVPeakBlocks: the largest)
	Info                                  metrics.RunInfo   // totals for the summary, with the per-instance block
	// P/D transfers (PD-3: started = completed + in flight).
	TransfersStarted, TransfersCompleted, TransfersInFlight int64
	// The encode pool: requests encoded, rejected at the encode stage, and
	// the encoders' busy time summed.
	Encoded, EncodeRejected, EncodeBusyUs int64
}

// Run executes the simulation, streams every result to the sink (live
// requests last: each instance's in index order, then those the cluster
// holds, by id) and returns the totals.
func (c *Cluster) Run() (Outcome, error) {
	if c.ran {
		return Outcome{}, errors.New("cluster: Run called twice")
	}
	c.ran = true
	if c.fleet != nil {
		c.fleet.start()
	}
	c.next()
	end := c.eng.Now() // the last event's time, dispatch ticks that changed nothing aside
	for c.err == nil && c.eng.Step(c.horizon) {
		if c.gw == nil || !c.gw.idle {
			end = c.eng.Now()
		} else {
			c.gw.idle = false
		}
	}
	if c.err != nil {
		return Outcome{}, c.err
	}
	if c.fleet != nil {
		end = c.fleet.lastArrival // the last tick may come after everything else
	}
	for _, in := range c.insts {
		end = max(end, in.LastStepUs(), in.LastLeftUs())
	}
	end = min(end, c.horizon)
	if c.fleet != nil {
		c.fleet.end = end
	}
	for i, in := range c.insts {
		in.Unfinished(func(res *instance.Result, r *instance.Request) {
			if c.cfg.Observer != nil {
				c.cfg.Observer.InstanceDone(i, res, r)
			}
			if c.pd != nil {
				res, r = c.pd.unfinished(res, r)
			}
			c.sink.Record(res, r)
		})
	}
	held := make([]*instance.Request, 0, len(c.transit))
	for r := range c.transit {
		held = append(held, r)
	}
	slices.SortFunc(held, func(a, b *instance.Request) int { return cmp.Compare(a.ID, b.ID) })
	for _, r := range held {
		res := instance.Unrouted(r)
		if c.pd != nil {
			p, q := c.pd.unfinished(&res, r)
			c.sink.Record(p, q)
			continue
		}
		c.sink.Record(&res, r)
	}
	if c.gw != nil {
		c.gw.held(func(r *instance.Request) {
			res := instance.Unrouted(r)
			res.InGateway = true
			c.sink.Record(&res, r)
		})
	}
	if c.pd != nil {
		c.pd.awaiting(func(res *instance.Result, r *instance.Request) { c.sink.Record(res, r) })
	}
	if c.gate != nil {
		c.gate.Unsent(func(res *instance.Result, r *instance.Request) { c.sink.Record(res, r) })
	}
	if c.dec != nil {
		if err := c.dec.flush(); err != nil {
			return Outcome{}, err
		}
	}
	out := Outcome{EndUs: end, Injected: c.injected, Rejected: c.rejected, Info: sim.Collect(end, c.insts...)}
	if g := c.gw; g != nil {
		out.Shed, out.Expired, out.Evicted, out.GatewayQueued = g.shed, g.expired, g.evicted, int64(g.size)
	}
	for i, in := range c.insts {
		k := in.Counters()
		s := &out.Counters
		s.Submitted += k.Submitted
		s.Completed += k.Completed
		s.LengthCapped += k.LengthCapped
		s.Dropped += k.Dropped
		s.TimedOut += k.TimedOut
		s.Preemptions += k.Preemptions
		s.Steps += k.Steps
		s.FastSteps += k.FastSteps
		s.LazySteps += k.LazySteps
		s.OutputTokens += k.OutputTokens
		s.Prefilled += k.Prefilled
		s.BusyUs += k.BusyUs
		s.KVUsedBlockUs += k.KVUsedBlockUs
		s.KVPeakBlocks = max(s.KVPeakBlocks, k.KVPeakBlocks)
		out.Info.PerInstance = append(out.Info.PerInstance, c.instanceInfo(i, in))
	}
	out.Info.Regret = c.rt.cf.summaries(c.cfg.routing(), c.pd != nil)
	if c.pd != nil {
		out.TransfersStarted, out.TransfersCompleted, out.TransfersInFlight = c.pd.started, c.pd.completed, int64(c.pd.active)
	}
	if c.enc != nil {
		out.Encoded, out.EncodeRejected, out.EncodeBusyUs = c.enc.encoded, c.enc.rejected, c.enc.busyUs
	}
	return out, nil
}

func (c *Cluster) instanceInfo(i int, in *instance.Instance) metrics.InstanceInfo {
	k := in.Counters()
	kv := in.KV()
	st := kv.Stats()
	pool := ""
	if c.pd != nil {
		pool = poolNames[poolDecode]
		if i < c.cfg.PD.PrefillInstances {
			pool = poolNames[poolPrefill]
		}
	}
	return metrics.InstanceInfo{Pool: pool, Routed: c.routed[i], Steps: k.Steps, BusyUs: k.BusyUs,
		Preemptions: k.Preemptions, KVUsedBlockUs: k.KVUsedBlockUs, KVCapacityBlockUs: int64(kv.TotalBlocks()) * k.BusyUs,
		KVPeak: float64(k.KVPeakBlocks) / float64(kv.TotalBlocks()), CacheHits: st.Hits, CacheMisses: st.Misses}
}

// bucket is the token-bucket admission state: it refills continuously at
// rate tokens/s up to its capacity; a request costs its prompt tokens.
type bucket struct {
	level, capacity, rate float64
	last                  int64
}

func (b *bucket) take(now int64, cost float64) bool {
	b.level = min(b.capacity, b.level+b.rate*float64(now-b.last)/1e6)
	b.last = now
	if b.level < cost {
		return false
	}
	b.level -= cost
	return true
}

// cevMin is the time of the earliest pending cluster event (des.NoHorizon
// if none). Cluster events are never cancelled and fire in time order, so
// the heap holds exactly the pending ones and the one firing is its minimum.
func (c *Cluster) cevMin() int64 {
	if e, ok := c.cev.Min(); ok {
		return e.At
	}
	return des.NoHorizon
}
