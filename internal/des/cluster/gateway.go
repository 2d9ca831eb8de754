package cluster

import (
	"math"
	"slices"

	"servesim/internal/des"
	"servesim/internal/des/instance"
)

// gateway is what sits in front of the routing when a deployment has SLO
// tiers at work (docs/simulator.md §10.1): the tier-aware admission
// policies, tenant budgets, and the flow-control queue with its bands,
// flows, saturation gate, dispatch tick, capacities, TTL and in-flight
// eviction. Every decision is a pure function of the simulated state: time
// is integer µs, ties go to the earlier arrival, and the dispatch tick is a
// cluster event of admission priority.
type gateway struct {
	c     *Cluster
	cfg   Gateway // with its defaults
	tiers tiers
	all   []int // every instance

	// The signals the detector and tier-shed read: live, or a snapshot of
	// every instance renewed when older than the routing's refresh
	// interval. The gateway keeps its own, so that what the router reads
	// (which depends on its policy and on decision logging) changes
	// nothing here.
	snap   []signals
	snapAt int64
	snapOK bool
	// sent counts the requests the gateway routed to each instance since
	// its snapshot: they wait there as far as it knows, so one round of
	// dispatch on one reading does not empty the queue onto the instances.
	sent []int

	slots    int                            // Σ max_num_seqs: the concurrent slots tenant budgets share
	tenantIn map[string]int                 // requests in flight per tenant (budgets)
	flying   map[*instance.Request]flighted // requests on instances (budgets, eviction)
	victims  map[int][]victim               // sheddable dispatched requests per priority, oldest first
	routedN  int64                          // requests routed so far: numbers victims

	bands   []*band // most urgent first
	size    int     // live entries
	seq     int64
	byAge   []*entry // entries in enqueue order (TTL), from ageAt
	ageAt   int
	tickOn  bool
	tickGen uint64 // the chain of ticks: a new one starts when the queue empties and fills again
	tickBox any    // tickGen, boxed once per chain for the tick events' data
	noSkip  bool   // tests: tick at every period, even where nothing can change
	// idle: the event just run was a tick that changed nothing; the run's
	// end ignores it, so that skipped ticks leave it where it was.
	idle    bool
	tickAct des.Action

	shed, expired, evicted int64
}

type flighted struct {
	inst, prio int
	tenant     string
	n          int64 // its number among the routed requests
}

// victim is a dispatched sheddable request; it stands for r only while r
// is in flight as the n-th routed request (a source may reuse a finished
// request's struct for a new one).
type victim struct {
	r *instance.Request
	n int64
}

func newGateway(c *Cluster) *gateway {
	g := &gateway{c: c, cfg: c.cfg.Gateway.withDefaults(), tiers: newTiers(c.cfg.Gateway.Priorities)}
	g.snap, g.sent = make([]signals, len(c.insts)), make([]int, len(c.insts))
	for i := range c.insts {
		g.all = append(g.all, i)
		g.slots += c.cfg.Instances[i].MaxNumSeqs
	}
	if len(g.cfg.TenantBudgets) > 0 || g.cfg.InFlightEviction {
		g.tenantIn, g.flying = map[string]int{}, map[*instance.Request]flighted{}
	}
	if g.cfg.InFlightEviction {
		g.victims = map[int][]victim{}
	}
	g.tickAct, g.tickBox = g.onTick, g.tickGen
	return g
}

// needsGateway reports whether the configuration uses any of it.
func (c *Config) needsGateway() bool {
	g := &c.Gateway
	return c.Admission == TierShed || c.Admission == GAIELegacy || g.FlowControl || len(g.TenantBudgets) > 0
}

// saturation is the detector's reading: ≥ 1 means saturated. Utilisation
// (llm-d's): the mean over instances of max(queue depth / QD threshold, KV
// utilisation / KV threshold), from the gateway's signals (read), the
// requests sent since they were read counted as queued; 1 without
// instances. Concurrency: requests in flight over the maximum.
func (g *gateway) saturation(now int64) float64 {
	switch g.cfg.Detector {
	case DetectNever:
		return 0
	case DetectConcurrency:
		n := 0
		for _, l := range g.c.load {
			n += l
		}
		return float64(n) / float64(g.cfg.MaxConcurrency)
	}
	if len(g.all) == 0 {
		return 1
	}
	g.read(now)
	var sum float64
	for i, s := range g.snap {
		sum += max(float64(s.queue+g.sent[i])/g.cfg.QDThreshold, s.kvUtil/g.cfg.KVThreshold)
	}
	return sum / float64(len(g.all))
}

// read renews the signals when they are older than the refresh interval
// (every time when it is 0), as routing renews its own.
func (g *gateway) read(now int64) {
	refresh := g.c.cfg.SnapshotRefreshUs
	if refresh > 0 && g.snapOK && now-g.snapAt <= refresh {
		return
	}
	for i := range g.snap {
		g.snap[i] = g.c.rt.live(i)
		// Live, the requests submitted whose queueing delay runs count too.
		g.snap[i].queue += g.c.insts[i].Pending()
		g.sent[i] = 0
	}
	g.snapAt, g.snapOK = now, true
}

// admit applies the tier-aware admission policies (which flow control
// replaces) and the tenant budgets; it returns "" to admit, else the
// refusal's reason.
func (g *gateway) admit(now int64, r *instance.Request) string {
	p := g.tiers.priority(r.SLOClass)
	policy := g.c.cfg.Admission
	if g.cfg.FlowControl {
		policy = AlwaysAdmit
	}
	switch policy {
	case TierShed:
		if p < g.cfg.TierShedMinPriority && g.maxLoad(now) > g.cfg.TierShedThreshold {
			return string(TierShed)
		}
	case GAIELegacy:
		if p < 0 && g.saturation(now) >= 1 {
			return string(GAIELegacy)
		}
	}
	if !g.withinBudget(r, p) {
		return "tenant-budget"
	}
	return ""
}

// maxLoad is the busiest instance's queue depth + batch size as routing
// sees them (tier-shed's overload signal).
func (g *gateway) maxLoad(now int64) int {
	g.read(now)
	m := 0
	for i, s := range g.snap {
		m = max(m, s.queue+g.sent[i]+s.batch)
	}
	return m
}

// withinBudget: a sheddable request of a tenant whose in-flight requests
// already fill its share of the slots (⌊share · slots⌋) is over budget;
// others always are within.
func (g *gateway) withinBudget(r *instance.Request, p int) bool {
	share, ok := g.cfg.TenantBudgets[r.Tenant]
	if !ok || p >= 0 {
		return true
	}
	return g.tenantIn[r.Tenant] < int(math.Floor(share*float64(g.slots)))
}

// routed records a request the gateway let through, before its routing.
func (g *gateway) routed(r *instance.Request) {
	if g.flying == nil {
		return
	}
	g.tenantIn[r.Tenant]++
	p := g.tiers.priority(r.SLOClass)
	g.routedN++
	g.flying[r] = flighted{inst: -1, prio: p, tenant: r.Tenant, n: g.routedN}
	if g.victims != nil && p < 0 {
		vs := append(g.victims[p], victim{r, g.routedN})
		if len(vs) > 1024 && len(vs) > 2*len(g.flying) { // bounded by the requests in flight
			vs = slices.DeleteFunc(vs, func(v victim) bool { f, ok := g.flying[v.r]; return !ok || f.n != v.n })
		}
		g.victims[p] = vs
	}
}

// assigned records the instance a routed request went to.
func (g *gateway) assigned(r *instance.Request, i int) {
	g.sent[i]++
	if f, ok := g.flying[r]; ok {
		f.inst = i
		g.flying[r] = f
	}
}

// finished forgets a request that left the cluster.
func (g *gateway) finished(r *instance.Request) {
	if f, ok := g.flying[r]; ok {
		g.tenantIn[f.tenant]--
		delete(g.flying, r)
	}
}
