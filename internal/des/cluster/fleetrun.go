package cluster

import (
	"math"
	"math/rand/v2"
	"slices"

	"servesim/internal/des"
	"servesim/internal/des/autoscale"
	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

// Fleet events run after arrivals and admissions of the same time, and
// before any step: a replica ready at t takes requests routed at t+.
const prioFleet = des.PrioRouting

type repState uint8

const (
	repPlaced   repState = iota // GPUs reserved on a node not yet ready
	repLoading                  // instance created, weights loading
	repReady                    // routable
	repDraining                 // not routable; holds its GPUs until its requests end
	repGone                     // GPUs freed
)

type node struct {
	pool  int
	ready bool
	gone  bool
	free  int // GPUs not reserved by a replica
}

type replica struct {
	pool, node int
	inst       int // index in the cluster's instances; -1 while placed
	state      repState
	// drainUs and freeUs are when it started draining and gave its GPUs
	// back (-1: not yet)
	drainUs, freeUs int64
}

// fleet is the run-time state of a Fleet.
type fleet struct {
	c      *Cluster
	cfg    *Fleet
	rng    *rand.Rand
	nodes  []node
	count  []int // nodes per pool, ready or provisioning
	reps   []replica
	byInst []int // replica of each instance
	served []int // requests each instance has finished (warm-up)
	// prompt + output tokens and count of finished requests (the compute
	// bound of a replica's capacity)
	tokSum, tokN int64
	stab         autoscale.Stabilizer
	scraped      autoscale.Signals
	scrapedOK    bool
	lastArrival  int64 // of the last request to arrive
	end          int64 // of the run
	acc          accumulator
	events       []ScaleEvent
	failed       int
	// requests an immediate drain cut, and those of them no replica was
	// left to take (rejected)
	cut, cutRejected int64
	own              int // the fleet's cluster events pending

	tickAct, scrapeAct, actuateAct, readyAct, nodeAct, freeAct des.Action
}

// newFleet places the initial replicas on the initial nodes, first fit in
// pool order, gives each the configuration of its pool (its own hardware),
// and wraps them for warm-up. It runs before the cluster creates its
// instances.
func newFleet(c *Cluster, insts []instance.Config) (*fleet, []instance.Config) {
	f := &fleet{c: c, cfg: c.cfg.Fleet, rng: rand.New(rand.NewPCG(streamSeed(c.cfg.Seed, "fleet"), 0)),
		count: make([]int, len(c.cfg.Fleet.Pools))}
	f.acc.width = f.cfg.ReportUs
	if f.acc.width == 0 {
		f.acc.width = 60_000_000
	}
	if a := f.cfg.Autoscaler; a != nil {
		f.stab = autoscale.Stabilizer{UpWindowUs: a.UpWindowUs, DownWindowUs: a.DownWindowUs}
	}
	f.tickAct, f.scrapeAct, f.actuateAct, f.readyAct, f.nodeAct, f.freeAct = f.onTick, f.onScrape, f.onActuate, f.onReady, f.onNode, f.onFree
	for p, pool := range f.cfg.Pools {
		for range pool.InitialNodes {
			f.nodes = append(f.nodes, node{pool: p, ready: true, free: pool.GPUsPerNode})
			f.count[p]++
		}
	}
	out := slices.Clone(insts)
	for i := range out {
		k := f.fit(-1)
		f.reserve(k)
		f.reps = append(f.reps, replica{pool: f.nodes[k].pool, node: k, inst: i, state: repReady, drainUs: -1, freeUs: -1})
		if p := f.cfg.Pools[f.nodes[k].pool].Instance; p != nil {
			out[i] = *p
		}
		f.byInst = append(f.byInst, i)
		f.served = append(f.served, f.cfg.Lifecycle.WarmUpRequests) // deployed already: warm
		if f.cfg.Lifecycle.ColdStart {
			f.reps[i].state = repLoading
			f.served[i] = -1 // warm-up starts once loaded
		}
		f.wrap(&out[i], i)
	}
	return f, out
}

// schedule schedules one of the fleet's cluster events.
func (f *fleet) schedule(at int64, act des.Action, data any) {
	f.own++
	f.c.scheduleCluster(at, prioFleet, act, data)
}

// pop is the first thing each fleet event does.
func (f *fleet) pop() {
	f.own--
	f.c.cev.Pop()
}

// fit is the first ready node (of pool p, or any pool when p < 0) with
// room for one replica; -1 if none.
func (f *fleet) fit(p int) int {
	for k, n := range f.nodes {
		if n.ready && !n.gone && (p < 0 || n.pool == p) && n.free >= f.cfg.Pools[n.pool].TP {
			return k
		}
	}
	return -1
}

// config is the configuration of pool p's replicas.
func (f *fleet) config(p int) *instance.Config {
	if ic := f.cfg.Pools[p].Instance; ic != nil {
		return ic
	}
	return &f.c.cfg.Instances[0]
}

func (f *fleet) reserve(k int) { f.nodes[k].free -= f.cfg.Pools[f.nodes[k].pool].TP }

// wrap makes instance i's steps slower while it warms up.
func (f *fleet) wrap(ic *instance.Config, i int) {
	l := f.cfg.Lifecycle
	if l.WarmUpRequests > 0 && l.WarmUpFactor > 1 {
		ic.Latency = &warmModel{Model: ic.Latency, served: &f.served, i: i, n: l.WarmUpRequests, factor: l.WarmUpFactor}
	}
}

// warmModel multiplies step times by factor until the instance has
// finished n requests.
type warmModel struct {
	latency.Model
	served *[]int
	i, n   int
	factor float64
}

func (w *warmModel) StepTime(s *latency.Step) int64 {
	t := w.Model.StepTime(s)
	if (*w.served)[w.i] < w.n {
		t = int64(min(math.Ceil(float64(t)*w.factor), 1<<61))
	}
	return t
}

// start schedules the first tick and the initial replicas' loading, and
// follows arrivals.
func (f *fleet) start() {
	c := f.c
	for _, act := range []*des.Action{&c.arrive, &c.pull} {
		next := *act
		*act = func(now int64, data any) {
			f.lastArrival = now
			next(now, data)
		}
	}
	f.acc.levels(0, f.levels())
	for r := range f.reps {
		if f.reps[r].state == repLoading {
			c.pools[poolAll] = slices.DeleteFunc(c.pools[poolAll], func(i int) bool { return i == f.reps[r].inst })
			f.schedule(f.sample(f.cfg.Lifecycle.Loading), f.readyAct, r)
		}
	}
	if f.cfg.Autoscaler != nil {
		f.schedTick(0)
	}
}

// sample draws a delay: normal, truncated at 0.
func (f *fleet) sample(d Delay) int64 {
	if d.StddevUs == 0 {
		return d.MeanUs
	}
	v := float64(d.MeanUs) + f.rng.NormFloat64()*float64(d.StddevUs)
	return int64(max(0, min(math.Round(v), 1<<50)))
}

// onReady makes a loading replica routable.
func (f *fleet) onReady(now int64, data any) {
	f.pop()
	r := &f.reps[data.(int)]
	if r.state != repLoading {
		return // drained while loading
	}
	r.state = repReady
	f.served[r.inst] = 0
	f.c.pools[poolAll] = append(f.c.pools[poolAll], r.inst)
	f.acc.levels(now, f.levels())
}

// onNode makes a provisioned node ready and creates the replicas placed on it.
func (f *fleet) onNode(now int64, data any) {
	f.pop()
	k := data.(int)
	if f.nodes[k].gone {
		return
	}
	f.nodes[k].ready = true
	for r := range f.reps {
		if f.reps[r].state == repPlaced && f.reps[r].node == k {
			f.load(now, r)
		}
	}
	f.acc.levels(now, f.levels())
}

// load creates replica r's instance on its (ready) node; it becomes
// routable after the loading delay.
func (f *fleet) load(now int64, r int) {
	c := f.c
	ic := *f.config(f.reps[r].pool)
	i := len(c.insts)
	f.served = append(f.served, -1)
	f.byInst = append(f.byInst, r)
	f.wrap(&ic, i)
	if err := c.addInstance(ic); err != nil {
		c.fail(err)
		return
	}
	f.reps[r].inst, f.reps[r].state = i, repLoading
	d := f.sample(f.cfg.Lifecycle.Loading)
	if d == 0 {
		f.reps[r].state = repReady
		f.served[i] = 0
		c.pools[poolAll] = append(c.pools[poolAll], i)
		return
	}
	f.schedule(now+d, f.readyAct, r)
}

// place reserves a replica of pool p: on a ready node at once, else on a
// node being provisioned, else on a new node. It reports false when the
// pool has no room.
func (f *fleet) place(now int64, p int) bool {
	pool := f.cfg.Pools[p]
	if k := f.fit(p); k >= 0 {
		f.reserve(k)
		f.reps = append(f.reps, replica{pool: p, node: k, inst: -1, state: repPlaced, drainUs: -1, freeUs: -1})
		f.load(now, len(f.reps)-1)
		return true
	}
	for k, n := range f.nodes {
		if !n.ready && !n.gone && n.pool == p && n.free >= pool.TP {
			f.reserve(k)
			f.reps = append(f.reps, replica{pool: p, node: k, inst: -1, state: repPlaced, drainUs: -1, freeUs: -1})
			return true
		}
	}
	if f.count[p] >= pool.MaxNodes {
		return false
	}
	k := len(f.nodes)
	f.nodes = append(f.nodes, node{pool: p, free: pool.GPUsPerNode})
	f.count[p]++
	f.reserve(k)
	f.reps = append(f.reps, replica{pool: p, node: k, inst: -1, state: repPlaced, drainUs: -1, freeUs: -1})
	if d := f.sample(pool.Provision); d > 0 {
		f.schedule(now+d, f.nodeAct, k)
	} else {
		f.nodes[k].ready = true
		f.load(now, len(f.reps)-1)
	}
	return true
}

// remove takes one replica of pool p away: a placement still waiting for
// its node first, then a loading replica, then the ready replica with the
// fewest requests in flight (the latest on ties), which drains.
func (f *fleet) remove(now int64, p int) bool {
	pick := func(st repState) int {
		best := -1
		for r := len(f.reps) - 1; r >= 0; r-- {
			x := f.reps[r]
			if x.pool == p && x.state == st && (best < 0 || st == repReady && f.c.load[x.inst] < f.c.load[f.reps[best].inst]) {
				best = r
			}
		}
		return best
	}
	if r := pick(repPlaced); r >= 0 {
		f.free(now, r)
		return true
	}
	if r := pick(repLoading); r >= 0 {
		f.free(now, r)
		return true
	}
	r := pick(repReady)
	if r < 0 {
		return false
	}
	f.drain(now, r)
	return true
}

// drain stops routing to replica r; with redirect its requests not yet
// scheduled are routed again. Its GPUs are freed when none is left; with
// immediate, at once, its requests cut and routed again.
func (f *fleet) drain(now int64, r int) {
	c := f.c
	i := f.reps[r].inst
	f.reps[r].state, f.reps[r].drainUs = repDraining, now
	c.pools[poolAll] = slices.DeleteFunc(c.pools[poolAll], func(x int) bool { return x == i })
	if f.cfg.Lifecycle.Drain == DrainImmediate {
		f.free(now, r)
		c.insts[i].Cut(func(q *instance.Request) { f.reroute(now, i, q) })
		return
	}
	if f.cfg.Lifecycle.Drain == DrainRedirect && len(c.pools[poolAll]) > 0 {
		c.insts[i].Withdraw(func(q *instance.Request) {
			c.load[i]--
			c.routeAll(now, q)
		})
	}
	if c.load[i] == 0 {
		f.free(now, r)
	}
}

// reroute routes again a request cut from instance i, or one that reaches
// it after it was cut away; with no replica left it is rejected.
func (f *fleet) reroute(now int64, i int, q *instance.Request) {
	f.c.load[i]--
	f.cut++
	if len(f.c.pools[poolAll]) == 0 {
		f.cutRejected++
	}
	f.c.routeAll(now, q)
}

// gone reports whether instance i's replica has given its GPUs back.
func (f *fleet) gone(i int) bool { return f.reps[f.byInst[i]].state == repGone }

// free gives replica r's GPUs back to its node.
func (f *fleet) free(now int64, r int) {
	x := &f.reps[r]
	f.nodes[x.node].free += f.cfg.Pools[x.pool].TP
	x.state, x.freeUs = repGone, now
}

// done follows every request that ends at instance i.
func (f *fleet) done(now int64, i int, res *instance.Result) {
	if f.served[i] >= 0 {
		f.served[i]++
	}
	if res.Status == instance.StatusCompleted {
		f.tokSum += int64(res.PromptTokens + res.OutputTokens)
		f.tokN++
	}
	if r := f.byInst[i]; f.reps[r].state == repDraining && f.c.load[i] == 0 {
		// An instance may report a request before the engine reaches its
		// end (steps run inline ahead): the GPUs come back at its end.
		f.schedule(max(now, res.DoneUs), f.freeAct, r)
	}
}

// onFree gives a drained replica's GPUs back.
func (f *fleet) onFree(now int64, data any) {
	f.pop()
	f.free(now, data.(int))
	f.acc.levels(now, f.levels())
}

// levels are the fleet's current replicas, GPUs and cost rate.
func (f *fleet) levels() level {
	var l level
	for _, r := range f.reps {
		switch r.state {
		case repReady:
			l.ready++
		case repPlaced, repLoading:
			l.loading++
		case repDraining:
			l.draining++
		}
	}
	for _, n := range f.nodes {
		if !n.gone {
			p := f.cfg.Pools[n.pool]
			l.gpus += float64(p.GPUsPerNode)
			l.dollarsPerHour += p.CostPerHour
		}
	}
	return l
}
