package instance

import "slices"

// Fast-forward by lazy decoding (docs/simulator.md §4).
//
// A steady decoder is a running request that produced a token at the end of
// the previous step and needs exactly one token per step. While every running
// request gets its whole need (the budget suffices) and no allocation can fail
// (enough free blocks for this step's needs), a step changes a steady decoder
// only by +1 progress, +1 token, one ITL sample of the step's Δ, and, every b
// tokens, a fresh KV block and a newly hashed full block. Steady decoders are
// therefore kept implicitly: a global round counter d advances them all at
// once, the decode context sum grows by their count, block events come from
// b buckets keyed by the round residue at which each needs a block, and
// completions (output length reached or the max_model_len cap) from a heap
// keyed by round. The remaining requests ("active": prefills, chunks,
// recomputes) and admissions are handled explicitly, with all KV operations
// in running-list order exactly as the reference step does them.
//
// A step costs O(active + block events + admissions + completions·log n)
// instead of O(running). Steps whose preconditions fail (budget too small,
// possible preemption) materialise every decoder and run the reference step.
// Consecutive steps run inline, without an engine event, while no other event
// can come first. Results are identical to the reference path
// (TestInvariantsAndFastForwardEquivalence).

type lazyState struct {
	d       int64        // rounds applied to the lazy decoders
	n       int          // lazy decoders
	ctx     int64        // Σ progress of the lazy decoders, current
	buckets [][]*Request // by residue: need a fresh block in rounds ≡ residue (mod b)
	done    doneHeap
	active  []*Request // non-lazy running requests, admission order
	ev      []*Request
	fin     []*Request
	tmp     []*Request
}

// merge appends the merge of two aseq-sorted lists to dst.
func merge(dst, a, b []*Request) []*Request {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if a[i].aseq < b[j].aseq {
			dst = append(dst, a[i])
			i++
		} else {
			dst = append(dst, b[j])
			j++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

type doneEntry struct {
	d    int64 // round after which the request is finished
	aseq int64
	r    *Request
	gen  uint32
}

type doneHeap []doneEntry

func (h doneHeap) less(i, j int) bool {
	if h[i].d != h[j].d {
		return h[i].d < h[j].d
	}
	return h[i].aseq < h[j].aseq
}

// push and pop are container/heap's Push and Pop, step for step (so the
// order is theirs), without boxing each entry in an interface: that was an
// allocation per lazy decoder, twice.
func (h *doneHeap) push(e doneEntry) {
	*h = append(*h, e)
	s := *h
	for j := len(s) - 1; j > 0; {
		i := (j - 1) / 2
		if !s.less(j, i) {
			break
		}
		s[i], s[j] = s[j], s[i]
		j = i
	}
}

func (h *doneHeap) pop() doneEntry {
	s := *h
	n := len(s) - 1
	s[0], s[n] = s[n], s[0]
	for i := 0; ; {
		j := 2*i + 1
		if j >= n {
			break
		}
		if j2 := j + 1; j2 < n && s.less(j2, j) {
			j = j2
		}
		if !s.less(j, i) {
			break
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
	e := s[n]
	*h = s[:n]
	return e
}

func byAseq(a, b *Request) int {
	switch {
	case a.aseq < b.aseq:
		return -1
	case a.aseq > b.aseq:
		return 1
	}
	return 0
}

// rebase brings a lazy request's explicit fields up to round d.
func (in *Instance) rebase(r *Request) {
	k := in.lz.d - r.dBase
	if k > 0 {
		r.progress += int(k)
		r.g += int(k)
		in.log.extend(r, r.dIdx, r.dIdx+k-1)
		r.lastEnd = in.busyUntil
		r.dBase = in.lz.d
		r.dIdx += k
	}
	in.kv.SetTokens(&r.seq, r.progress)
}

// lazify makes a steady decoder lazy.
func (in *Instance) lazify(r *Request) {
	lz := &in.lz
	b := int64(in.b)
	r.lazy = true
	r.lgen++
	r.dBase = lz.d
	r.dIdx = in.log.next
	r.res = int(((lz.d-int64(r.progress))%b + b) % b)
	bk := append(lz.buckets[r.res], nil)
	i := len(bk) - 1
	for i > 0 && bk[i-1].aseq > r.aseq {
		bk[i] = bk[i-1]
		bk[i].bidx = i
		i--
	}
	bk[i] = r
	r.bidx = i
	lz.buckets[r.res] = bk
	lz.n++
	lz.ctx += int64(r.progress)
	k := min(r.OutputLen-r.g, in.cfg.MaxModelLen-1-r.progress)
	lz.done.push(doneEntry{d: lz.d + int64(k), aseq: r.aseq, r: r, gen: r.lgen})
}

// unlazy materialises r and takes it out of the lazy set.
func (in *Instance) unlazy(r *Request) {
	lz := &in.lz
	in.rebase(r)
	bk := lz.buckets[r.res]
	for i := r.bidx; i+1 < len(bk); i++ {
		bk[i] = bk[i+1]
		bk[i].bidx = i
	}
	bk[len(bk)-1] = nil
	lz.buckets[r.res] = bk[:len(bk)-1]
	lz.n--
	lz.ctx -= int64(r.progress)
	r.lazy = false
	r.lgen++
}

// detach takes a running request out of the lazy bookkeeping (timeout).
func (in *Instance) detach(r *Request) {
	if !in.lazyOn {
		return
	}
	if r.lazy {
		in.unlazy(r)
		return
	}
	if i := slices.Index(in.lz.active, r); i >= 0 {
		in.lz.active = slices.Delete(in.lz.active, i, i+1)
	}
}

// materializeAll makes every running request explicit.
func (in *Instance) materializeAll() {
	lz := &in.lz
	for _, r := range in.running {
		if r.lazy {
			in.unlazy(r)
		}
	}
	lz.done = lz.done[:0]
	lz.active = append(lz.active[:0], in.running...)
}

// steady reports whether r, just executed in a step ending at end, can
// become lazy.
func (in *Instance) steady(r *Request, end int64) bool {
	return r.fin == 0 && r.g >= 1 && r.progress == r.target()-1 && r.lastEnd == end &&
		r.g < r.OutputLen && r.progress < in.cfg.MaxModelLen-1
}

// lazyStep runs the step at t with lazy decoders, or falls back to the
// reference step when its preconditions fail.
func (in *Instance) lazyStep(t int64) (end int64, more bool) {
	lz := &in.lz
	total, fits := in.lazyGrants()
	if !fits {
		return in.slowStep(t)
	}
	in.lazyGrow()
	budget := in.cfg.MaxNumBatchedTokens - total

	// Phase 2: admit waiting requests within what is left of the budget.
	var reload int64
	first := len(in.running)
	for len(in.running) < in.cfg.MaxNumSeqs && in.wait.Len() > 0 && budget > 0 {
		rl, n, ok := in.admit(in.wait.Head(), budget, t)
		if !ok {
			break
		}
		reload += rl
		budget -= n
	}
	lz.active = append(lz.active, in.running[first:]...)

	// Execute.
	delta := in.stepTime(lz.active, lz.n, lz.ctx, reload)
	end = t + delta
	in.busyUntil = end
	idx := in.log.add(delta)
	lz.d++
	lz.ctx += int64(lz.n)
	gen := in.cnt.OutputTokens
	in.cnt.OutputTokens += int64(lz.n)
	in.cnt.LazySteps++
	in.settleAll(lz.active, t, end, idx)
	in.account(delta, 1)
	if in.cfg.Steps != nil {
		in.reportStep(t, end, in.cnt.OutputTokens-gen)
	}

	in.lazyComplete(t, end)
	return end, len(in.running) > 0 || in.wait.Len() > 0 || in.async.len() > 0
}

// lazyGrants grants the active requests their tokens for the step and
// reports the step's tokens and whether they and the blocks they need fit
// the budget and the free KV blocks; if not, the step is the reference one.
func (in *Instance) lazyGrants() (total int, fits bool) {
	lz := &in.lz
	b := int64(in.b)
	budget := in.cfg.MaxNumBatchedTokens
	total = lz.n
	blocks := len(lz.buckets[lz.d%b])
	// When every lazy decoder comes before every active request in the
	// running list and the budget covers the decoders, the reference step
	// gives each decoder its token and the active requests, in order, what
	// is left (a long prefill takes the rest of the budget): their grants
	// are computed from what is left, as it does.
	ordered := lz.n <= budget && in.lazyFirst()
	left := budget
	if ordered {
		left -= lz.n
	}
	for _, r := range lz.active {
		n := in.tokensFor(r.target()-r.progress, r.progress, left)
		if ordered {
			left -= n
		}
		r.grant, r.fin = n, 0
		total += n
		blocks += in.kv.NewBlocksFor(&r.seq, n)
	}
	return total, total <= budget && blocks <= in.kv.FreeBlocks()
}

// lazyGrow grows the KV of the requests that need it this step: the lazy
// decoders crossing a block boundary and the active requests granted tokens.
func (in *Instance) lazyGrow() {
	lz := &in.lz
	b := int64(in.b)
	// Block events and active grants in running-list order (every
	// list is kept sorted by admission sequence, so a merge suffices).
	var ev []*Request
	if b > 1 {
		ev = merge(lz.ev[:0], lz.buckets[lz.d%b], lz.buckets[(lz.d+1)%b])
	} else {
		ev = append(lz.ev[:0], lz.buckets[0]...)
	}
	if len(lz.active) > 0 {
		ne := len(ev)
		for _, r := range lz.active {
			if r.grant > 0 {
				ev = append(ev, r)
			}
		}
		if ne > 0 && len(ev) > ne {
			lz.tmp = merge(lz.tmp[:0], ev[:ne], ev[ne:])
			ev = append(ev[:0], lz.tmp...)
		}
	}
	for _, r := range ev {
		n := r.grant
		if r.lazy {
			in.kv.SetTokens(&r.seq, r.progress+int(lz.d-r.dBase))
			n = 1
		}
		if !in.kv.Grow(&r.seq, n) {
			panic("instance: allocation failed after the step's capacity check")
		}
	}
	lz.ev = ev[:0]
}

// lazyComplete ends the step that ran from t to end: requests that reached
// their last token finish (those with a deadline inside the step are kept
// for the reference path's order), and active requests in a steady decode
// become lazy.
func (in *Instance) lazyComplete(t, end int64) {
	lz := &in.lz
	// In running-list order.
	deferred := func(r *Request) bool { return r.DeadlineUs > t && r.DeadlineUs < end }
	fin := lz.fin[:0]
	for len(lz.done) > 0 && lz.done[0].d <= lz.d {
		e := lz.done.pop()
		r := e.r
		if !r.lazy || r.lgen != e.gen {
			continue
		}
		in.unlazy(r)
		r.fin = finDone
		if r.g != r.OutputLen {
			r.fin = finCapped
		}
		if deferred(r) {
			i, _ := slices.BinarySearchFunc(lz.active, r, byAseq)
			lz.active = slices.Insert(lz.active, i, r)
			continue
		}
		fin = append(fin, r)
	}
	nl := len(fin)
	keep := lz.active[:0]
	for _, r := range lz.active {
		if r.fin != 0 && !deferred(r) {
			fin = append(fin, r)
			continue
		}
		if in.steady(r, end) {
			in.lazify(r)
			continue
		}
		keep = append(keep, r)
	}
	for i := len(keep); i < len(lz.active); i++ {
		lz.active[i] = nil
	}
	lz.active = keep
	if len(fin) > 0 {
		if nl > 0 && len(fin) > nl {
			lz.tmp = merge(lz.tmp[:0], fin[:nl], fin[nl:])
			fin = append(fin[:0], lz.tmp...)
		}
		in.removeSorted(fin)
		for _, r := range fin {
			in.finish(r, end)
		}
	}
	lz.fin = fin[:0]
}

// lazyFirst reports whether every lazy decoder precedes every active
// request in the running list (admission order): each bucket is sorted by
// admission sequence, the active list too.
func (in *Instance) lazyFirst() bool {
	lz := &in.lz
	if len(lz.active) == 0 || lz.n == 0 {
		return true
	}
	first := lz.active[0].aseq
	for _, bk := range lz.buckets {
		if len(bk) > 0 && bk[len(bk)-1].aseq > first {
			return false
		}
	}
	return true
}

// slowStep materialises everything, runs the reference step, and makes the
// steady decoders lazy again.
func (in *Instance) slowStep(t int64) (end int64, more bool) {
	in.materializeAll()
	end, more = in.runStep(t)
	lz := &in.lz
	lz.active = lz.active[:0]
	for _, r := range in.running {
		if in.steady(r, end) {
			in.lazify(r)
			continue
		}
		lz.active = append(lz.active, r)
	}
	return end, more
}

// removeSorted removes requests (sorted by aseq) from the running list, which
// is sorted by aseq too, without touching the requests that stay.
func (in *Instance) removeSorted(gone []*Request) {
	run := in.running
	w, from := 0, 0
	for _, r := range gone {
		i, ok := slices.BinarySearchFunc(run[from:], r, byAseq)
		if !ok {
			panic("instance: finished request not in the running list")
		}
		i += from
		w += copy(run[w:], run[from:i])
		from = i + 1
	}
	w += copy(run[w:], run[from:])
	clear(run[w:])
	in.running = run[:w]
}
