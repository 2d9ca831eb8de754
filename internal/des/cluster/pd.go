package cluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"servesim/internal/des"
	"servesim/internal/des/instance"
)

// Phases of a disaggregated request.
const (
	phasePrefill  = iota // its prefill part is routed to, or runs on, a prefill instance
	phaseAwaiting        // prefilled; decode routing pending at the prefill's end
	phaseTransfer        // decode blocks reserved; KV in transfer
	phaseDecode          // enqueued on its decode instance
)

// pdReq follows one disaggregated request: the parent (what the source
// gave and the sink gets back; it becomes the decode part) and its prefill
// part, a copy marked PrefillOnly.
type pdReq struct {
	parent, part *instance.Request
	pre, dec     int
	phase        uint8
	cancelled    bool // the decode part ended during its transfer

	prefillEnqueue, prefillEnd, xferStart, xferEnd int64
}

type pdState struct {
	c         *Cluster
	cfg       PD
	decider   Decider
	active    int // transfers in flight
	started   int64
	completed int64
	live      map[*pdReq]struct{}
	byParent  map[*instance.Request]*pdReq // parents registered at a decode instance
	routeAct  des.Action
	xferAct   des.Action
	blockSize int
	observe   func(rec *pdReq, ev string, now int64) // tests
	disaggreg int64
}

func newPD(c *Cluster, cfg PD) *pdState {
	p := &pdState{c: c, cfg: cfg, decider: cfg.Decider, live: map[*pdReq]struct{}{},
		byParent: map[*instance.Request]*pdReq{}, blockSize: c.insts[0].KV().BlockSize()}
	if p.decider == "" {
		p.decider = DecideNever
	}
	p.routeAct, p.xferAct = p.onDecodeRouting, p.onTransferDone
	return p
}

// route places an admitted request: whole on the decode pool, or
// disaggregated, as the decider says (docs/simulator.md §12).
func (p *pdState) route(now int64, r *instance.Request) {
	c := p.c
	switch p.decider {
	case DecideAlways:
		p.start(now, r)
	case DecidePrefixThreshold:
		d := c.rt.pick(now, r, c.pools[poolDecode], poolDecode)
		cached := cachedTokensLive(c.insts[d], r)
		dis := len(r.Prompt)-cached > p.cfg.PrefixThreshold
		if c.dec != nil {
			c.dec.pd(now, r, p.decider, d, cached, dis)
		}
		if !dis {
			c.assign(now, r, d, poolDecode)
			return
		}
		p.start(now, r)
	default:
		c.assign(now, r, c.rt.pick(now, r, c.pools[poolDecode], poolDecode), poolDecode)
	}
}

// start sends r's prefill part to the prefill pool.
func (p *pdState) start(now int64, r *instance.Request) {
	c := p.c
	part := &instance.Request{ID: r.ID, ArrivalUs: r.ArrivalUs, Prompt: r.Prompt, Output: r.Output, KnownHashes: r.KnownHashes,
		OutputLen: r.OutputLen, MaxOutputLen: r.MaxOutputLen, SLOClass: r.SLOClass, Tenant: r.Tenant,
		DeadlineUs: r.DeadlineUs, SessionID: r.SessionID, Round: r.Round, PrefillOnly: true,
		Private: r.Private, PrivateFrom: r.PrivateFrom}
	part.ShareRoutingStamp(r, &c.rt.stamps)
	rec := &pdReq{parent: r, part: part, pre: -1, dec: -1}
	part.Tag = rec
	p.live[rec] = struct{}{}
	p.disaggreg++
	i := c.rt.pick(now, part, c.pools[poolPrefill], poolPrefill)
	rec.pre = i
	c.assign(now, part, i, poolPrefill)
}

// done intercepts the results of P/D parts; it reports false for requests
// that run whole.
func (p *pdState) done(i int, res *instance.Result, r *instance.Request) bool {
	c := p.c
	if r.PrefillOnly {
		rec := r.Tag.(*pdReq)
		c.load[i]--
		if res.Status == instance.StatusPrefilled {
			rec.phase = phaseAwaiting
			rec.prefillEnqueue, rec.prefillEnd = res.EnqueueUs, res.DoneUs
			p.note(rec, "prefilled", res.DoneUs)
			c.scheduleCluster(res.DoneUs, des.PrioRouting, p.routeAct, rec)
			return true
		}
		// The prefill part was dropped or timed out: so is the request.
		delete(p.live, rec)
		out := *res
		out.Tag = rec.parent.Tag
		c.finish(&out, rec.parent)
		return true
	}
	rec, ok := p.byParent[r]
	if !ok {
		return false
	}
	c.load[i]--
	delete(p.byParent, r)
	delete(p.live, rec)
	if rec.phase == phaseTransfer {
		rec.cancelled = true // timed out while its KV was in transfer
	}
	p.note(rec, "done", res.DoneUs)
	c.finish(res, r)
	return true
}

func (p *pdState) note(rec *pdReq, ev string, now int64) {
	if p.observe != nil {
		p.observe(rec, ev, now)
	}
}

// onDecodeRouting runs at the prefill's end: route within the decode pool,
// reserve the prompt's blocks there (failure drops the request) and start
// the KV transfer.
func (p *pdState) onDecodeRouting(now int64, data any) {
	c := p.c
	c.cev.Pop()
	rec := data.(*pdReq)
	d := c.rt.pick(now, rec.parent, c.pools[poolDecode], poolDecode)
	ok, err := c.insts[d].ReserveDecode(rec.parent)
	if err != nil {
		c.fail(fmt.Errorf("cluster: %w", err))
		return
	}
	if !ok {
		if err := c.insts[rec.pre].ReleaseKV(rec.part); err != nil {
			c.fail(fmt.Errorf("cluster: %w", err))
			return
		}
		delete(p.live, rec)
		res := instance.Drop(rec.parent, now, d)
		// The prompt fits an empty decode instance: its blocks were only
		// taken for the moment (not dropped_unservable).
		kv := c.insts[d].KV()
		res.NoDecodeKV = (len(rec.parent.Prompt)+kv.BlockSize()-1)/kv.BlockSize() <= kv.TotalBlocks()
		p.note(rec, "dropped", now)
		if c.cfg.Observer != nil {
			c.cfg.Observer.Refused(now, rec.parent, "dropped")
		}
		c.finish(&res, rec.parent)
		return
	}
	c.load[d]++
	c.routed[d]++
	if c.cfg.Observer != nil {
		c.cfg.Observer.Routed(now, rec.parent, d, poolNames[poolDecode])
	}
	rec.dec, rec.phase, rec.xferStart = d, phaseTransfer, now
	p.byParent[rec.parent] = rec
	k := 1
	if p.cfg.Contention {
		k = p.active + 1
	}
	dur := p.transferUs(len(rec.parent.Prompt), k)
	p.active++
	p.started++
	p.note(rec, "transfer", now)
	if c.cfg.Observer != nil {
		c.cfg.Observer.Transfer(now, now+dur, rec.parent, rec.pre, d)
	}
	c.scheduleCluster(now+dur, des.PrioTransferDone, p.xferAct, rec)
}

// transferUs is ⌈base + bytes / (bandwidth / k)⌉, at least 1, with bytes =
// ⌈prompt/b⌉·b·KV bytes per token.
func (p *pdState) transferUs(prompt, k int) int64 {
	b := p.blockSize
	bytes := float64((prompt+b-1)/b*b) * p.cfg.KVBytesPerToken
	us := math.Ceil(float64(p.cfg.BaseLatencyUs) + bytes*float64(k)/p.cfg.BandwidthBytesPerUs)
	if !(us >= 1) {
		return 1
	}
	if us > 1<<60 {
		return 1 << 60
	}
	return int64(us)
}

// onTransferDone: the prefill instance frees the part's blocks and the
// decode part is enqueued with its blocks held (docs/simulator.md §12 step 3).
func (p *pdState) onTransferDone(now int64, data any) {
	c := p.c
	c.cev.Pop()
	rec := data.(*pdReq)
	p.active--
	p.completed++
	rec.xferEnd = now
	if err := c.insts[rec.pre].ReleaseKV(rec.part); err != nil {
		c.fail(fmt.Errorf("cluster: %w", err))
		return
	}
	if rec.cancelled {
		return
	}
	rec.phase = phaseDecode
	p.note(rec, "transferred", now)
	if err := c.insts[rec.dec].SubmitDecode(rec.parent); err != nil {
		c.fail(fmt.Errorf("cluster: %w", err))
	}
}

// unfinished maps a live result at the end of the run to its parent
// request: a prefill part reports as the request, a decode part in transfer
// is marked InTransfer.
func (p *pdState) unfinished(res *instance.Result, r *instance.Request) (*instance.Result, *instance.Request) {
	if r.PrefillOnly {
		rec := r.Tag.(*pdReq)
		out := *res
		out.Tag = rec.parent.Tag
		return &out, rec.parent
	}
	if rec, ok := p.byParent[r]; ok && rec.phase == phaseTransfer {
		res.InTransfer = true
	}
	return res, r
}

// awaiting hands out, by id, the requests prefilled whose decode routing
// lies past the end of the run.
func (p *pdState) awaiting(fn func(res *instance.Result, r *instance.Request)) {
	var recs []*pdReq
	for rec := range p.live {
		if rec.phase == phaseAwaiting {
			recs = append(recs, rec)
		}
	}
	slices.SortFunc(recs, func(a, b *pdReq) int { return cmp.Compare(a.parent.ID, b.parent.ID) })
	for _, rec := range recs {
		res := instance.Unrouted(rec.parent)
		res.InTransfer = true
		fn(&res, rec.parent)
	}
}
