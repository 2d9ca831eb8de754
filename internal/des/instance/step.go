package instance

import (
	"fmt"

	"servesim/internal/des"
	"servesim/internal/des/latency"
)

// onStep is the Step event (docs/simulator.md §4). With fast-forward on, steady decoders
// are advanced implicitly (lazy.go) and following steps run inline while no
// other event can come first.
func (in *Instance) onStep(now int64, _ any) {
	in.stepPending = false
	if in.pp.stages > 1 {
		in.lastStep = max(in.lastStep, now)
		in.ppStep(now)
		return
	}
	t := now
	for {
		if in.async.on {
			in.promote(t)
		}
		in.lastStep = t
		var end int64
		var more bool
		switch {
		case in.variant:
			end, more = in.variantStep(t)
		case in.lazyOn:
			end, more = in.lazyStep(t)
		default:
			end, more = in.runStep(t)
		}
		if in.verify != nil {
			if err := in.CheckKV(); err != nil {
				in.verify("INV-4 after the step at " + fmt.Sprint(t) + ": " + err.Error())
			}
		}
		if !more {
			break
		}
		if !(in.lazyOn || in.variantInline) || end >= in.bound() {
			in.scheduleStep(end)
			break
		}
		in.cnt.FastSteps++
		t = end
	}
	in.maybeFold()
}

// bound is the time from which no step may run inline: the engine's next
// event, or the caller's bound and this instance's own next event.
func (in *Instance) bound() int64 {
	if in.cfg.FastForwardBound != nil {
		return min(in.cfg.FastForwardBound(), in.ownNext())
	}
	return in.eng.PeekTime()
}

// ownNext is the time of this instance's earliest pending Queued or Timeout
// event (des.NoHorizon if none). Entries of events that ran or were
// cancelled are dropped lazily.
func (in *Instance) ownNext() int64 {
	for {
		top, ok := in.own.Min()
		if !ok {
			break
		}
		if in.eng.Scheduled(top.V) {
			return top.At
		}
		in.own.Pop()
	}
	return des.NoHorizon
}

// tokensFor is the tokens r may get from position progress: need, capped by
// the long-prefill threshold P, the remaining budget B and max_model_len
// (at most M − 1 − progress).
func (in *Instance) tokensFor(need, progress, budget int) int {
	n := need
	if p := in.cfg.LongPrefillThreshold; p > 0 && n > p {
		n = p
	}
	n = min(n, budget)
	return max(0, min(n, in.cfg.MaxModelLen-1-progress))
}

// runStep runs one step at time t on the explicit representation (the
// reference path): schedule, execute, complete. It returns the step's end
// and whether another step must follow.
func (in *Instance) runStep(t int64) (end int64, more bool) {
	budget := in.cfg.MaxNumBatchedTokens
	for _, r := range in.running {
		r.grant, r.fin = 0, 0
	}
	preempted, selfStop := false, false

	// Phase 1: running requests first, in admission order.
	for i := 0; i < len(in.running); {
		if budget <= 0 {
			break
		}
		r := in.running[i]
		n := in.tokensFor(r.target()-r.progress, r.progress, budget)
		if n == 0 {
			i++
			continue
		}
		rm := in.makeRoom(r, &i, t, func() bool { return in.kv.Grow(&r.seq, n) }, in.victim)
		budget += rm.freed
		preempted = preempted || rm.preempted
		if rm.self {
			selfStop = true
			break
		}
		r.grant = n
		budget -= n
		i++
	}
	if in.verify != nil {
		in.checkPhase1(budget, selfStop)
	}

	// Phase 2: waiting requests, head of line, unless something was preempted.
	var reload int64
	if !preempted {
		for len(in.running) < in.cfg.MaxNumSeqs && in.wait.Len() > 0 && budget > 0 {
			w := in.wait.Head()
			rl, n, ok := in.admit(w, budget, t)
			if !ok {
				break
			}
			reload += rl
			budget -= n
		}
	}

	return in.execute(t, reload)
}

// execute runs the execute and complete phases of a step at t whose batch
// is formed (every running request's grant set), on the explicit
// representation, and returns the step's end and whether another step must
// follow.
func (in *Instance) execute(t, reload int64) (end int64, more bool) {
	delta := in.stepTime(in.running, 0, 0, reload)
	end = t + delta
	in.busyUntil = end
	idx := in.log.add(delta)
	gen := in.cnt.OutputTokens
	in.settleAll(in.running, t, end, idx)
	in.account(delta, 1)
	if in.cfg.Steps != nil {
		in.reportStep(t, end, in.cnt.OutputTokens-gen)
	}
	if in.kv.CPUEnabled() {
		in.kv.SetNow(end)
		for _, r := range in.running {
			in.kv.MirrorToCPU(&r.seq)
		}
	}

	// Complete.
	keep := in.running[:0]
	var done []*Request
	for _, r := range in.running {
		if r.fin != 0 && !(r.DeadlineUs > t && r.DeadlineUs < end) {
			done = append(done, r)
			continue
		}
		keep = append(keep, r)
	}
	clear(in.running[len(keep):])
	in.running = keep
	for _, r := range done {
		in.finish(r, end)
	}

	return end, len(in.running) > 0 || in.wait.Len() > 0 || in.async.len() > 0
}

// stepTime is Δ of a step whose explicit members are rs (those with a
// grant) plus decodes implicit decoders of context sum ctxSum, with reload
// µs of CPU-tier reloads.
func (in *Instance) stepTime(rs []*Request, decodes int, ctxSum, reload int64) int64 {
	return max(1, in.lat.StepTime(in.describe(rs, decodes, ctxSum))+reload)
}

// describe fills the instance's step description with the members of rs
// that have a grant, on top of decodes implicit decoders of context sum
// ctxSum.
func (in *Instance) describe(rs []*Request, decodes int, ctxSum int64) *latency.Step {
	st := &in.step
	st.Prefill = st.Prefill[:0]
	st.DecodeCount, st.DecodeContextSum = decodes, ctxSum
	for _, r := range rs {
		if r.grant <= 0 {
			continue
		}
		if r.decoding() {
			st.DecodeCount++
			st.DecodeContextSum += int64(r.progress)
		} else {
			st.Prefill = append(st.Prefill, prefillWork(r))
		}
	}
	return st
}

// settleAll settles every member of rs with a grant (settle).
func (in *Instance) settleAll(rs []*Request, t, end, idx int64) {
	for _, r := range rs {
		if r.grant > 0 {
			r.fin = in.settle(r, t, end, idx)
		}
	}
}

// room is what makeRoom did.
type room struct {
	freed     int  // grants of the preempted requests, back to the budget
	members   int  // preempted requests that had a grant this step
	preempted bool // anything was preempted
	self      bool // r itself was preempted
	stuck     bool // no victim was left and it still does not fit
}

// makeRoom calls fits until it succeeds (it allocates r's tokens), each
// time preempting the victim pick chooses (its index in the running list;
// −1 = none left). The Phase-1 cursor *i moves back for each victim before
// it, so no request is skipped (INV-12).
func (in *Instance) makeRoom(r *Request, i *int, t int64, fits func() bool, pick func() int) room {
	var rm room
	for !fits() {
		vi := pick()
		if vi < 0 {
			rm.stuck = true
			return rm
		}
		v := in.running[vi]
		rm.freed += v.grant
		if v.grant > 0 {
			rm.members++
		}
		in.preempt(vi, t)
		rm.preempted = true
		if v == r {
			rm.self = true
			return rm
		}
		if vi < *i {
			*i--
		}
	}
	return rm
}

// Ways a step can finish a request (Request.fin).
const (
	finDone      = 1 // last token produced (or O = 0 prefill done)
	finCapped    = 2 // max_model_len cap reached
	finPrefilled = 3 // P/D prefill part's prefill done
)

// settle applies r's tokens granted in the step [t, end) (log index idx)
// and reports how the step finished it (0: not).
func (in *Instance) settle(r *Request, t, end, idx int64) uint8 {
	r.progress += r.grant
	if r.progress == r.target() {
		if r.PrefillOnly && r.g == 0 {
			return finPrefilled
		}
		if r.g < r.OutputLen {
			in.produce(r, t, end, idx)
		}
		if r.g == r.OutputLen {
			if r.OutputLen == 0 {
				r.firstTokEnd = end // TTFT = E2E = end + A_tok − arrival
			}
			return finDone
		}
	}
	if r.progress >= in.cfg.MaxModelLen-1 {
		return finCapped
	}
	return 0
}

// finish ends a request the step finished at engine time end.
func (in *Instance) finish(r *Request, end int64) {
	fin := r.fin
	r.fin = 0
	if fin == finPrefilled {
		in.cnt.Prefilled++
		in.terminate(r, StatusPrefilled, end) // keeps its KV blocks
		return
	}
	r.capped = fin == finCapped
	in.complete(r, end)
}

// admit tries to move the head of the wait queue into the running batch
// (Phase 2, steps 1-4). It returns the CPU reload cost and the tokens granted.
func (in *Instance) admit(w *Request, budget int, t int64) (reload int64, n int, ok bool) {
	b := in.b
	target := w.target()
	transferred := w.held
	var c int
	if w.held {
		// A P/D decode part: its blocks are reserved and its progress is
		// prompt − 1; it needs no fresh block for the last prompt token.
		c = w.progress
		n = in.tokensFor(target-c, c, budget)
		if n <= 0 || !in.kv.Grow(&w.seq, n) {
			return 0, 0, false
		}
		w.held = false
	} else {
		gpu, cpu := in.kv.Match(&w.seq, target)
		c = b * min(gpu+cpu, (target-1)/b)
		n = in.tokensFor(target-c, c, budget)
		if n <= 0 || (in.cfg.NoChunkedPrefill && n < in.tokensFor(target-c, c, target)) {
			return 0, 0, false // without chunked prefill the prompt goes whole or waits
		}
		in.kv.SetNow(t)
		reload, ok = in.kv.Admit(&w.seq, c, n)
		if !ok {
			return 0, 0, false
		}
	}
	in.join(w, c, n, t, transferred)
	return reload, n, true
}

// join moves w, whose KV is allocated, from the wait queue to the end of
// the running batch with progress c and a grant of n tokens this step.
func (in *Instance) join(w *Request, c, n int, t int64, transferred bool) {
	in.wait.remove(w)
	w.aseq = in.nextAseq
	in.nextAseq++
	in.running = append(in.running, w)
	setStatus(w, StatusRunning)
	w.progress = c
	w.grant = n
	w.fin = 0
	if !w.hasFirstSched {
		w.hasFirstSched = true
		w.firstSchedUs = t
		if !transferred { // a P/D decode part's KV came by transfer, not from the cache
			w.cachedFirst = min(c, len(w.Prompt))
		}
	}
	if in.cfg.Tracer != nil {
		in.cfg.Tracer.Scheduled(t, w, n)
	}
}

// produce records a token of r whose engine time is end, in step idx
// starting at t.
func (in *Instance) produce(r *Request, t, end, idx int64) {
	switch {
	case r.g == 0:
		r.firstTokEnd = end
	case r.lastEnd == t:
		in.log.consecutive(r, idx)
	default:
		in.log.explicitSample(r, end-r.lastEnd+in.aTok)
	}
	r.g++
	r.lastEnd = end
	in.cnt.OutputTokens++
}

// reportStep hands the step [t, end) just executed (in.step holds its
// composition) to the step observer.
func (in *Instance) reportStep(t, end, generated int64) {
	st := &in.step
	info := StepInfo{Batch: len(st.Prefill) + st.DecodeCount, DecodeTokens: st.DecodeCount, Generated: int(generated),
		KVUsedBlocks: in.kv.UsedBlocks(), Waiting: in.wait.Len()}
	for _, p := range st.Prefill {
		info.PrefillTokens += p.NewTokens
	}
	in.cfg.Steps.Step(in.cfg.ID, t, end, info)
}

// account adds n steps' KV use and busy time (delta is their total length;
// used blocks are constant over them).
func (in *Instance) account(delta int64, n int64) {
	used := in.kv.UsedBlocks()
	in.cnt.Steps += n
	in.cnt.BusyUs += delta
	in.cnt.KVUsedBlockUs += int64(used) * delta
	in.cnt.KVPeakBlocks = max(in.cnt.KVPeakBlocks, used)
}

// complete finishes r at engine time end (its KV is still held).
func (in *Instance) complete(r *Request, end int64) {
	in.kv.Release(&r.seq)
	in.cnt.Completed++
	if r.capped {
		in.cnt.LengthCapped++
	}
	in.lastLeft = max(in.lastLeft, end)
	if in.cfg.Tracer != nil {
		in.cfg.Tracer.Left(end, r)
	}
	in.terminate(r, StatusCompleted, end)
}

// victim picks the preemption victim's index in the running list.
func (in *Instance) victim() int {
	last := len(in.running) - 1
	if in.cfg.Preemption != PreemptPriority {
		return last
	}
	best := last
	for i := last - 1; i >= 0; i-- {
		r, b := in.running[i], in.running[best]
		if r.prioKey > b.prioKey || (r.prioKey == b.prioKey && r.ArrivalUs > b.ArrivalUs) {
			best = i
		}
	}
	return best
}

// preempt evicts running[vi]: release its blocks, reset its progress, put it
// at the front of the wait queue.
func (in *Instance) preempt(vi int, t int64) {
	v := in.running[vi]
	copy(in.running[vi:], in.running[vi+1:])
	in.running[len(in.running)-1] = nil
	in.running = in.running[:len(in.running)-1]
	in.kv.Preempt(&v.seq)
	v.progress = 0
	v.grant = 0
	v.preemptions++
	in.cnt.Preemptions++
	in.log.closeSpan(v)
	if in.cfg.PreemptMode == ModeReset {
		v.g = 0
		v.firstTokEnd = -1
	}
	setStatus(v, StatusQueued)
	v.qkey = in.fcfsFront
	in.fcfsFront--
	in.wait.push(v)
	if in.cfg.Tracer != nil {
		in.cfg.Tracer.Preempted(t, v)
	}
}

// checkPhase1 verifies INV-12: after Phase 1 every running decode request
// has its token, unless the budget ran out, the M cap applies, or Phase 1
// stopped because a request's own allocation preempted it.
func (in *Instance) checkPhase1(budget int, selfStop bool) {
	if budget <= 0 || selfStop {
		return
	}
	for _, r := range in.running {
		if r.g >= 1 && r.target()-r.progress == 1 && r.grant != 1 && r.progress < in.cfg.MaxModelLen-1 {
			in.verify(fmt.Sprintf("INV-12: request %d got %d tokens with budget %d left", r.ID, r.grant, budget))
		}
	}
}

func prefillWork(r *Request) latency.PrefillWork {
	return latency.PrefillWork{NewTokens: r.grant, Context: r.progress, Target: r.target()}
}
