package instance

import (
	"slices"

	"servesim/internal/des/kvcache"
)

// Fast-forward (issue 3 item 5). A stretch is a run of steps in which every
// running request is a decode that gets its one token, nothing is admitted,
// nobody completes, is capped or preempted, and no other event can observe
// the instance. Such steps differ only in their decode context sum, so each
// costs one latency-model call; the only per-request work left is at block
// boundaries (a fresh block every b tokens, a hashed full block every b
// tokens), done in the same order as step-by-step execution would: step by
// step, in running-list order. Per-request counters, ITL spans and KV token
// counts are brought up to date once at the end of the stretch.
//
// Results are identical to stepping one by one (TestFastForwardEquivalence).

type ffState struct {
	p0     []int     // progress at stretch start, by running index
	alloc  [][]int32 // by step residue mod b: running indices needing a fresh block
	fill   [][]int32 // by step residue mod b: running indices completing a block
	events []int32   // merged, sorted running indices of one step
	watch  map[kvcache.Hash]struct{}
}

func (in *Instance) bound() int64 {
	if in.cfg.FastForwardBound != nil {
		return in.cfg.FastForwardBound()
	}
	return in.eng.PeekTime()
}

// fastForward runs a stretch starting with the step at t and reports whether
// it did (false: run a normal step instead).
func (in *Instance) fastForward(t int64) bool {
	run := in.running
	n := len(run)
	b := in.b
	budget := in.cfg.MaxNumBatchedTokens
	if n == 0 || b < 2 || n > budget {
		return false
	}
	m := in.cfg.MaxModelLen
	limit := int(^uint(0) >> 1)
	var ctx int64
	for _, r := range run {
		if r.g < 1 || r.target()-r.progress != 1 || r.lastEnd != t {
			return false
		}
		// The step that makes g = O or progress = M − 1 must be a normal step.
		limit = min(limit, r.OutputLen-r.g-1, m-2-r.progress)
		ctx += int64(r.progress)
	}
	if limit < 1 {
		return false
	}
	ff := &in.ff
	// Phase 2 must be unable to admit in every step of the stretch.
	ff.watch = nil
	if in.wait.Len() > 0 && n < in.cfg.MaxNumSeqs && budget-n > 0 {
		w := in.wait.Head()
		target := w.target()
		gpu, _ := in.kv.Match(&w.seq, target)
		useful := (target - 1) / b
		c := b * min(gpu, useful)
		nw := in.tokensFor(target-c, c, budget-n)
		if nw <= 0 || in.kv.AdmitFits(&w.seq, c, nw) {
			return false
		}
		// Fewer free blocks or evicted matches keep it blocked; a new block
		// whose hash extends its chain could unblock it: watch for those.
		ff.watch = make(map[kvcache.Hash]struct{}, useful+1)
		for k := 0; k <= useful && k < target/b; k++ {
			ff.watch[w.seq.BlockHash(k, b)] = struct{}{}
		}
	}

	// Bucket block events by step residue, in running-list order.
	if cap(ff.alloc) < b {
		ff.alloc = make([][]int32, b)
		ff.fill = make([][]int32, b)
	}
	ff.alloc, ff.fill = ff.alloc[:b], ff.fill[:b]
	for k := 0; k < b; k++ {
		ff.alloc[k], ff.fill[k] = ff.alloc[k][:0], ff.fill[k][:0]
	}
	ff.p0 = ff.p0[:0]
	for i, r := range run {
		p := r.progress
		ff.p0 = append(ff.p0, p)
		ff.alloc[(b-p%b)%b] = append(ff.alloc[(b-p%b)%b], int32(i))
		ff.fill[(b-(p+1)%b)%b] = append(ff.fill[(b-(p+1)%b)%b], int32(i))
	}

	bound := in.bound()
	free := in.kv.FreeBlocks()
	st := &in.step
	st.Prefill = st.Prefill[:0]
	st.DecodeCount = n
	first := in.log.next
	cur := t
	j := 0
	for j < limit {
		if j > 0 && cur >= bound {
			break
		}
		al, fl := ff.alloc[j%b], ff.fill[j%b]
		if len(al) > free {
			break // this step would preempt
		}
		if ff.watch != nil && in.fillsWatched(fl, j) {
			break
		}
		in.ffEvents(al, fl, j)
		free -= len(al)
		st.DecodeContextSum = ctx
		delta := max(1, in.lat.StepTime(st))
		in.log.add(delta)
		in.account(delta, 1)
		ctx += int64(n)
		cur += delta
		j++
	}
	if j == 0 {
		return false
	}
	if ff.watch != nil {
		in.kv.CountAllocFailures(int64(j)) // the blocked head's refusals
	}
	last := in.log.next - 1
	for i, r := range run {
		in.kv.SetTokens(&r.seq, ff.p0[i]+j)
		r.progress += j
		r.g += j
		r.lastEnd = cur
		in.log.extend(r, first, last)
	}
	in.cnt.OutputTokens += int64(j * n)
	in.cnt.FastSteps += int64(j)
	in.busyUntil = cur
	in.scheduleStep(cur)
	in.maybeFold()
	return true
}

// fillsWatched reports whether a block completed in step j would extend the
// blocked head's prefix chain.
func (in *Instance) fillsWatched(fl []int32, j int) bool {
	for _, i := range fl {
		r := in.running[i]
		k := (in.ff.p0[i] + j) / in.b // the block the token at p0+j completes
		if _, ok := in.ff.watch[r.seq.BlockHash(k, in.b)]; ok {
			return true
		}
	}
	return false
}

// ffEvents applies step j's block events in running-list order: each request
// is caught up to its position and given its token through the cache.
func (in *Instance) ffEvents(al, fl []int32, j int) {
	ev := in.ff.events[:0]
	ev = append(ev, al...)
	ev = append(ev, fl...)
	if len(al) > 0 && len(fl) > 0 {
		slices.Sort(ev)
		ev = slices.Compact(ev)
	}
	for _, i := range ev {
		r := in.running[i]
		pos := in.ff.p0[i] + j
		in.kv.SetTokens(&r.seq, pos)
		if !in.kv.Grow(&r.seq, 1) {
			panic("instance: fast-forward allocation failed after its capacity check")
		}
	}
	in.ff.events = ev
}
