package cluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"servesim/internal/des"
	"servesim/internal/des/instance"
)

// The flow-control queue of the gateway (docs/simulator.md §10.1):
// priority bands of per-tenant flows, capacities and shedding, the
// dispatch tick with its TTL and in-flight eviction, and the dispatch
// orders.

// entry is one request waiting in the queue; dead once it has left it.
type entry struct {
	r        *instance.Request
	seq      int64
	enqUs    int64
	deadline int64 // slo-deadline order; 0 otherwise
	band     *band
	flow     *flow
	dead     bool
}

// flow is the queue of one (tenant, priority): a heap by (deadline, seq),
// which is FIFO when there are no deadlines. Dead entries are skipped when
// they reach the top.
type flow struct {
	tenant string
	h      []*entry
	live   int
}

// band holds the flows of one priority, in tenant order.
type band struct {
	prio   int
	flows  []*flow
	cursor int // round-robin: the next flow to serve
	live   int
	order  []*entry // enqueue order: the newest is the shedding victim
}

// enqueue is flow control's admission: the request joins its band and
// flow, or is refused when the band or the queue is full (unless queue
// shedding makes room); then the queue dispatches what it may.
func (g *gateway) enqueue(now int64, r *instance.Request) {
	p := g.tiers.priority(r.SLOClass)
	b := g.band(p)
	switch {
	case g.cfg.PerBandCapacity > 0 && b.live >= g.cfg.PerBandCapacity:
		g.c.refuse(now, r, instance.StatusRejected, "queue-full")
		return
	case g.cfg.MaxQueueDepth > 0 && g.size >= g.cfg.MaxQueueDepth:
		if !g.cfg.QueueShedding || !g.shedFor(now, p) {
			g.c.refuse(now, r, instance.StatusRejected, "queue-full")
			return
		}
	}
	e := &entry{r: r, seq: g.seq, enqUs: now, band: b}
	g.seq++
	if g.cfg.DispatchOrder == OrderSLODeadline {
		e.deadline = math.MaxInt64 // no target: after every deadline, in arrival order
		t := r.SLOTargetUs
		if t <= 0 {
			t = g.cfg.SLOTargetsUs[r.SLOClass]
		}
		if t > 0 {
			e.deadline = now + t
		}
	}
	e.flow = b.flow(r.Tenant)
	e.flow.push(e)
	b.live++
	b.order = append(b.order, e)
	g.size++
	if g.cfg.TTLUs > 0 {
		g.byAge = append(g.byAge, e)
	}
	g.dispatch(now)
	g.arm(now)
}

// band returns the band of priority p, made when missing.
func (g *gateway) band(p int) *band {
	i, ok := slices.BinarySearchFunc(g.bands, p, func(b *band, p int) int { return cmp.Compare(p, b.prio) })
	if !ok {
		g.bands = slices.Insert(g.bands, i, &band{prio: p})
	}
	return g.bands[i]
}

func (b *band) flow(tenant string) *flow {
	i, ok := slices.BinarySearchFunc(b.flows, tenant, func(f *flow, t string) int { return cmp.Compare(f.tenant, t) })
	if !ok {
		b.flows = slices.Insert(b.flows, i, &flow{tenant: tenant})
		if i < b.cursor {
			b.cursor++
		}
	}
	return b.flows[i]
}

// shedFor makes room in a full queue for a request of priority p: the
// newest entry of the least urgent sheddable band below p leaves as shed.
// False when there is none.
func (g *gateway) shedFor(now int64, p int) bool {
	for k := len(g.bands) - 1; k >= 0; k-- {
		b := g.bands[k]
		if b.prio >= 0 || b.prio >= p {
			return false
		}
		for len(b.order) > 0 {
			e := b.order[len(b.order)-1]
			b.order = b.order[:len(b.order)-1]
			if !e.dead {
				g.drop(e)
				g.shed++
				g.c.refuse(now, e.r, instance.StatusShed, "")
				return true
			}
		}
	}
	return false
}

// drop takes a live entry out of the queue's counts; its heap slot is
// skipped when it reaches the top.
func (g *gateway) drop(e *entry) {
	e.dead = true
	e.flow.live--
	e.band.live--
	g.size--
	if g.size == 0 { // the tick stops; the pending one, if any, does nothing
		g.tickOn = false
		g.tickGen++
		g.tickBox = g.tickGen
	}
}

// arm starts or continues the dispatch tick while the queue holds
// requests: at now + the period, or, where ticks could change nothing, at
// the first tick of the period's grid that can (skipTo).
func (g *gateway) arm(now int64) {
	if g.tickOn || g.size == 0 {
		return
	}
	g.tickOn = true
	t := g.cfg.DispatchTickUs
	at := now + t
	if target := g.skipTo(); target > at {
		at += (target - at + t - 1) / t * t
	}
	g.c.scheduleCluster(at, des.PrioAdmission, g.tickAct, g.tickBox)
}

// skipTo is the earliest time a tick can change anything, after one that
// found the pool saturated or the queue empty: with the utilisation
// detector on a snapshot, its reading holds (the requests sent since only
// add to it) until the snapshot ages past the refresh interval, so only
// that renewal and the next TTL expiry matter; without in-flight eviction,
// which acts at every tick. 0 = the next period.
func (g *gateway) skipTo() int64 {
	refresh := g.c.cfg.SnapshotRefreshUs
	if g.noSkip || g.cfg.InFlightEviction || g.cfg.Detector != DetectUtilization || refresh == 0 || !g.snapOK {
		return 0
	}
	at := g.snapAt + refresh + 1
	if g.cfg.TTLUs > 0 {
		for ; g.ageAt < len(g.byAge); g.ageAt++ {
			if e := g.byAge[g.ageAt]; !e.dead {
				at = min(at, e.enqUs+g.cfg.TTLUs)
				break
			}
			g.byAge[g.ageAt] = nil
		}
	}
	return at
}

// onTick is the periodic dispatch: expire, dispatch, evict, and tick again
// while requests wait. A tick of a chain that stopped does nothing.
func (g *gateway) onTick(now int64, data any) {
	g.c.cev.Pop()
	if data.(uint64) != g.tickGen {
		g.idle = true
		return
	}
	g.tickOn = false
	size, evicted := g.size, g.evicted
	g.expire(now)
	g.dispatch(now)
	if g.cfg.InFlightEviction {
		g.evict(now)
	}
	g.idle = g.size == size && g.evicted == evicted
	g.arm(now)
}

// expire lets go the entries that have waited their TTL (seen at the
// ticks, in enqueue order).
func (g *gateway) expire(now int64) {
	if g.cfg.TTLUs == 0 {
		return
	}
	for g.ageAt < len(g.byAge) {
		e := g.byAge[g.ageAt]
		if !e.dead && now-e.enqUs < g.cfg.TTLUs {
			break
		}
		g.byAge[g.ageAt] = nil
		g.ageAt++
		if !e.dead {
			g.drop(e)
			g.expired++
			g.c.refuse(now, e.r, instance.StatusExpired, "")
		}
	}
	if g.ageAt > 1024 && g.ageAt > len(g.byAge)/2 {
		g.byAge = append(g.byAge[:0], g.byAge[g.ageAt:]...)
		g.ageAt = 0
	}
}

// dispatch routes waiting requests while the detector says the pool is
// not saturated.
func (g *gateway) dispatch(now int64) {
	for g.size > 0 && g.saturation(now) < 1 {
		e := g.next()
		g.take(e)
		g.c.route(now, e.r)
	}
}

// take removes the top entry of its flow, the one next chose.
func (g *gateway) take(e *entry) {
	e.flow.pop()
	g.drop(e)
	if b := e.band; len(b.order) > 2*b.live+1024 {
		b.order = slices.DeleteFunc(b.order, func(e *entry) bool { return e.dead })
	}
}

// next is the entry the dispatch order picks; the queue is not empty.
// fifo: the earliest arrival of any band. priority and slo-deadline: the
// most urgent band that holds any, then the flow the fairness policy
// picks, and its top (its oldest, or its earliest deadline).
func (g *gateway) next() *entry {
	if g.cfg.DispatchOrder == OrderFIFO {
		var best *entry
		for _, b := range g.bands {
			for _, f := range b.flows {
				if e := f.top(); e != nil && (best == nil || e.seq < best.seq) {
					best = e
				}
			}
		}
		return best
	}
	for _, b := range g.bands {
		if b.live > 0 {
			return g.pick(b)
		}
	}
	panic("cluster: gateway queue count out of step with its bands")
}

// pick is the entry of band b the fairness policy serves; b is not empty.
func (g *gateway) pick(b *band) *entry {
	if g.cfg.Fairness == FairRoundRobin {
		for k := range b.flows {
			f := b.flows[(b.cursor+k)%len(b.flows)]
			if e := f.top(); e != nil {
				b.cursor = (b.cursor + k + 1) % len(b.flows)
				return e
			}
		}
	}
	var best *entry
	for _, f := range b.flows {
		if e := f.top(); e != nil && (best == nil || before(e, best)) {
			best = e
		}
	}
	return best
}

// urgent is the band of the most urgent non-sheddable requests waiting,
// nil when none waits.
func (g *gateway) urgent() *band {
	for _, b := range g.bands {
		if b.prio < 0 {
			return nil
		}
		if b.live > 0 {
			return b
		}
	}
	return nil
}

// evict: while saturated and a non-sheddable request waits, the newest
// dispatched request of the lowest sheddable priority that is on an
// instance is stopped there, and the waiting request dispatched in its
// place. One per tick.
func (g *gateway) evict(now int64) {
	b := g.urgent()
	if b == nil || g.saturation(now) < 1 {
		return
	}
	prios := make([]int, 0, len(g.victims))
	for p := range g.victims {
		prios = append(prios, p)
	}
	slices.Sort(prios)
	for _, p := range prios {
		vs := g.victims[p]
		// The newest first; finished ones leave the list, those still on
		// their way to an instance stay for a later tick.
		for k := len(vs) - 1; k >= 0; k-- {
			v := vs[k]
			f, ok := g.flying[v.r]
			if !ok || f.n != v.n {
				vs = slices.Delete(vs, k, k+1)
				continue
			}
			if st := v.r.Status(); f.inst < 0 || st == instance.StatusNew || st.Terminal() {
				continue
			}
			g.victims[p] = slices.Delete(vs, k, k+1)
			if err := g.c.insts[f.inst].Evict(v.r); err != nil {
				g.c.fail(fmt.Errorf("cluster: %w", err))
				return
			}
			g.evicted++
			e := g.pick(b)
			g.take(e)
			g.c.route(now, e.r)
			return
		}
		g.victims[p] = vs
		if len(vs) == 0 {
			delete(g.victims, p)
		}
	}
}

// held hands out the requests still waiting, in enqueue order.
func (g *gateway) held(fn func(r *instance.Request)) {
	var es []*entry
	for _, b := range g.bands {
		for _, e := range b.order {
			if !e.dead {
				es = append(es, e)
			}
		}
	}
	slices.SortFunc(es, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	for _, e := range es {
		fn(e.r)
	}
}

func before(a, b *entry) bool {
	if a.deadline != b.deadline {
		return a.deadline < b.deadline
	}
	return a.seq < b.seq
}

func (f *flow) push(e *entry) {
	f.h = append(f.h, e)
	f.live++
	for i := len(f.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !before(f.h[i], f.h[p]) {
			break
		}
		f.h[i], f.h[p] = f.h[p], f.h[i]
		i = p
	}
}

// top is the flow's live top entry, nil when it has none.
func (f *flow) top() *entry {
	for len(f.h) > 0 && f.h[0].dead {
		f.pop()
	}
	if len(f.h) == 0 {
		return nil
	}
	return f.h[0]
}

func (f *flow) pop() {
	n := len(f.h) - 1
	f.h[0] = f.h[n]
	f.h[n] = nil
	f.h = f.h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && before(f.h[l], f.h[m]) {
			m = l
		}
		if l+1 < n && before(f.h[l+1], f.h[m]) {
			m = l + 1
		}
		if m == i {
			return
		}
		f.h[i], f.h[m] = f.h[m], f.h[i]
		i = m
	}
}
