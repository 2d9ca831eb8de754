package cluster

import (
	"servesim/internal/des/autoscale"
	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
)

// ScaleEvent is one autoscaler decision, as actuated.
type ScaleEvent struct {
	DecidedUs, ActuatedUs int64
	Pool                  string
	Delta                 int  // +1 or −1
	Done                  bool // false: no room (scale-up) or nothing to remove
	Required, Spare       float64
	Utilization           float64
}

// schedTick schedules the tick at t and, when the metrics scrape lags, the
// scrape it will read: the last multiple of the scrape interval at or
// before t.
func (f *fleet) schedTick(t int64) {
	a := f.cfg.Autoscaler
	if s := a.ScrapeIntervalUs; s > 0 && t%s != 0 && t-t%s >= f.c.eng.Now() {
		f.schedule(t-t%s, f.scrapeAct, nil)
	}
	f.schedule(t, f.tickAct, nil)
}

func (f *fleet) onScrape(now int64, _ any) {
	f.pop()
	f.scraped, f.scrapedOK = f.collect(), true
}

// collect reads the signals of the ready replicas, and the loading ones
// (and those placed on a node not yet ready) as pending supply.
func (f *fleet) collect() autoscale.Signals {
	c := f.c
	var s autoscale.Signals
	for _, r := range f.reps {
		p, ic := f.cfg.Pools[r.pool], f.config(r.pool)
		capTok := int64(ic.KV.Blocks) * int64(ic.KV.BlockSize)
		switch r.state {
		case repPlaced, repLoading:
			s.PendingReplicas++
			s.PendingKVCapacityTokens += capTok
		case repReady:
			in := c.insts[r.inst]
			kv := in.KV()
			x := autoscale.Replica{ID: r.inst, Variant: autoscale.Variant{GPU: p.GPU, TP: p.TP},
				CostPerHour: p.CostPerHour * float64(p.TP) / float64(p.GPUsPerNode), KVCapacityTokens: capTok,
				KVTokensInUse: int64(kv.Utilization()*float64(kv.TotalBlocks())) * int64(ic.KV.BlockSize),
				QueueDepth:    in.QueueDepth(), InFlight: c.load[r.inst]}
			if f.tokN > 0 && ic.MaxNumSeqs > 0 {
				x.ComputeCapacityTokens = int64(ic.MaxNumSeqs) * (f.tokSum / f.tokN)
			}
			s.Replicas = append(s.Replicas, x)
		}
	}
	return s
}

// onTick runs the pipeline: collect, analyze, stabilize, decide, and
// schedule the actuation. Empty nodes above their pool's minimum go back.
func (f *fleet) onTick(now int64, _ any) {
	f.pop()
	a := f.cfg.Autoscaler
	sig := f.scraped
	if !f.scrapedOK || a.ScrapeIntervalUs == 0 || now%a.ScrapeIntervalUs == 0 {
		sig = f.collect()
	}
	f.scrapedOK = false
	res := a.Analyzer.Analyze(sig)
	up, down := f.stab.Pass(now, res.Required > 0, res.Spare > 0)
	if !up {
		res.Required = 0
	}
	if !down {
		res.Spare = 0
	}
	d := autoscale.Decide(res, f.offers(), len(sig.Replicas)+sig.PendingReplicas, autoscale.Bounds{Min: a.MinReplicas, Max: a.MaxReplicas})
	if d.Delta != 0 {
		ev := ScaleEvent{DecidedUs: now, Delta: d.Delta, Required: res.Required, Spare: res.Spare, Utilization: res.Utilization}
		ev.Pool = f.cfg.Pools[f.poolOf(d.Variant)].Name
		f.schedule(now+a.ActuationDelayUs, f.actuateAct, &ev)
	}
	f.releaseNodes()
	f.acc.levels(now, f.levels())
	if f.busy() {
		f.schedTick(now + a.IntervalUs)
	}
}

// offers are the variants of the pools, with the GPUs each can still give:
// free on its nodes plus those of nodes it may still provision.
func (f *fleet) offers() []autoscale.Offer {
	var out []autoscale.Offer
	for p, pool := range f.cfg.Pools {
		free := (pool.MaxNodes - f.count[p]) * pool.GPUsPerNode
		for _, n := range f.nodes {
			if n.pool == p && !n.gone && n.free >= pool.TP {
				free += n.free
			}
		}
		out = append(out, autoscale.Offer{Variant: autoscale.Variant{GPU: pool.GPU, TP: pool.TP},
			CostPerReplica: pool.CostPerHour * float64(pool.TP) / float64(pool.GPUsPerNode), FreeGPUs: free})
	}
	return out
}

// poolOf is the pool of variant v (pools have distinct variants).
func (f *fleet) poolOf(v autoscale.Variant) int {
	for p, pool := range f.cfg.Pools {
		if pool.GPU == v.GPU && pool.TP == v.TP {
			return p
		}
	}
	return 0
}

// onActuate applies one decision.
func (f *fleet) onActuate(now int64, data any) {
	f.pop()
	ev := data.(*ScaleEvent)
	ev.ActuatedUs = now
	p := 0
	for k, pool := range f.cfg.Pools {
		if pool.Name == ev.Pool {
			p = k
		}
	}
	if ev.Delta > 0 {
		ev.Done = f.place(now, p)
		if !ev.Done {
			f.failed++
		}
	} else {
		ev.Done = f.remove(now, p)
	}
	f.acc.levels(now, f.levels())
	f.events = append(f.events, *ev)
}

// releaseNodes gives back ready nodes that hold no replica, down to each
// pool's minimum.
func (f *fleet) releaseNodes() {
	for k := len(f.nodes) - 1; k >= 0; k-- {
		n := &f.nodes[k]
		if n.gone || !n.ready || n.free != f.cfg.Pools[n.pool].GPUsPerNode || f.count[n.pool] <= f.cfg.Pools[n.pool].MinNodes {
			continue
		}
		n.gone = true
		f.count[n.pool]--
	}
}

// busy reports whether the run still has work the autoscaler may follow:
// cluster events pending other than the fleet's own (arrivals among them),
// requests in flight, or replicas on their way in or out.
func (f *fleet) busy() bool {
	c := f.c
	if c.cev.Len() > f.own || len(c.transit) > 0 {
		return true
	}
	for _, l := range c.load {
		if l > 0 {
			return true
		}
	}
	for _, r := range f.reps {
		if r.state == repPlaced || r.state == repLoading || r.state == repDraining {
			return true
		}
	}
	return false
}

// addInstance creates one more instance, with the same engine, KV block
// pool and fast-forward bound as the others.
func (c *Cluster) addInstance(ic instance.Config) error {
	i := len(c.insts)
	ic.ID = i
	ic.KV.Pool = c.insts[0].KV().Pool()
	ic.FastForwardBound = c.ffBound
	ic.OnDone = func(res *instance.Result, r *instance.Request) { c.done(i, res, r) }
	in, err := instance.New(c.eng, ic)
	if err != nil {
		return err
	}
	c.insts = append(c.insts, in)
	c.load = append(c.load, 0)
	c.routed = append(c.routed, 0)
	c.instArrive = append(c.instArrive, func(now int64, data any) { c.onInstanceArrival(i, data) })
	rt := c.rt
	rt.insts, rt.load = c.insts, c.load
	rt.snap = append(rt.snap, signals{})
	if rt.prefix != nil {
		rt.prefix = append(rt.prefix, newLRU(PrefixIndexBlocks, rt.first))
	}
	if rt.views != nil {
		in.KV().EnableJournal()
		rt.views = append(rt.views, map[kvcache.Hash]struct{}{})
	}
	return nil
}
