package instance

import (
	"math"

	"servesim/internal/des"
	"servesim/internal/des/latency"
)

// Pipeline parallelism (docs/simulator.md §11, --pp P > 1). An instance holds up to P
// micro-batches in flight, each of at most ⌈S/P⌉ requests, and a request
// is in at most one. A micro-batch is formed by the vllm rules (docs/simulator.md §5) over
// the requests not in flight when stage 0 is free; it passes stages
// 0..P−1 in order, each stage running one micro-batch at a time: with τ the
// stage time (StepTime of L/P layers) and x the activation transfer to the
// next stage, stage k of micro-batch m ends at
//
//	E_k(m) = max(E_{k−1}(m), E_k(m−1)) + τ_m + (x_m if k < P−1),
//
// with E_{−1}(m) the formation time. Its tokens are committed, and its
// requests' tokens produced, when the last stage ends (a Commit event);
// the next micro-batch may be formed when stage 0 frees. KV blocks are
// allocated at formation; preemption only evicts requests not in flight
// (when the policy's victim is in flight, the request short of blocks
// waits for its commit).
// Pipelined instances run the reference step only (no lazy decoding).

// microBatch is one micro-batch in flight.
type microBatch struct {
	members []*Request // with their grants in Request.grant
	start   int64      // formation time
	end     int64      // last stage's end: commit time
	idx     int64      // step-log index (its Δ is end − start, for ITL)
}

type pipeline struct {
	stages    int
	cap       int     // ⌈S/P⌉ requests per micro-batch
	stageFree []int64 // end of the last micro-batch on each stage
	flight    []*microBatch
	commitAct des.Action
	stage     latency.Model // one stage's StepTime; nil = Latency / P
	sendUs    float64       // activation transfer per token between stages, µs
}

// ppStep forms and launches one micro-batch at t (a Step event).
func (in *Instance) ppStep(t int64) {
	pp := &in.pp
	if len(pp.flight) >= pp.stages || t < pp.stageFree[0] {
		in.ppWake(t)
		return
	}
	for _, r := range in.running {
		if r.mb == nil {
			r.grant, r.fin = 0, 0
		}
	}
	budget := in.cfg.MaxNumBatchedTokens
	members := 0
	preempted := false

	// Phase 1: running requests not in flight, in admission order.
	for i := 0; i < len(in.running) && budget > 0 && members < pp.cap; {
		r := in.running[i]
		if r.mb != nil {
			i++
			continue
		}
		n := in.tokensFor(r.target()-r.progress, r.progress, budget)
		if n == 0 {
			i++
			continue
		}
		rm := in.makeRoom(r, &i, t, func() bool { return in.kv.Grow(&r.seq, n) }, in.ppVictim)
		budget += rm.freed
		members -= rm.members
		preempted = preempted || rm.preempted
		if rm.self || rm.stuck {
			break
		}
		r.grant = n
		budget -= n
		members++
		i++
	}

	// Phase 2: waiting requests.
	var reload int64
	if !preempted {
		for len(in.running) < in.cfg.MaxNumSeqs && members < pp.cap && in.wait.Len() > 0 && budget > 0 {
			rl, n, ok := in.admit(in.wait.Head(), budget, t)
			if !ok {
				break
			}
			reload += rl
			budget -= n
			members++
		}
	}
	if members == 0 {
		// Nothing can run now. A commit will wake the instance; with
		// nothing in flight (blocks held outside the pipeline, e.g. by P/D
		// parts), retry after an empty stage, as the vllm step spins.
		if len(pp.flight) == 0 && (in.wait.Len() > 0 || len(in.running) > 0) {
			in.scheduleStep(t + max(1, in.stageTime(in.describe(nil, 0, 0))))
		}
		return
	}

	in.ppLaunch(t, reload)
}

// ppLaunch launches the micro-batch of the running requests granted tokens
// at t, reload µs of KV reloads added to its stage time.
func (in *Instance) ppLaunch(t, reload int64) {
	pp := &in.pp
	// Stage time τ, transfer x, the pipeline recurrence.
	mb := &microBatch{start: t}
	tokens := 0
	for _, r := range in.running {
		if r.mb != nil || r.grant == 0 {
			continue
		}
		r.mb = mb
		mb.members = append(mb.members, r)
		tokens += r.grant
	}
	st := in.describe(mb.members, 0, 0)
	tau := max(1, in.stageTime(st)+reload)
	x := int64(math.Ceil(float64(tokens) * pp.sendUs))
	end := t
	for k := range pp.stageFree {
		d := tau
		if k < pp.stages-1 {
			d += x
		}
		end = max(end, pp.stageFree[k]) + d
		pp.stageFree[k] = end
	}
	mb.end = end
	mb.idx = in.log.add(end - t)
	pp.flight = append(pp.flight, mb)
	in.busyUntil = pp.stageFree[0]
	in.account(pp.stageFree[0]-t, 1)
	if in.cfg.Steps != nil {
		info := StepInfo{Batch: len(mb.members), DecodeTokens: st.DecodeCount, KVUsedBlocks: in.kv.UsedBlocks(), Waiting: in.wait.Len()}
		for _, p := range st.Prefill {
			info.PrefillTokens += p.NewTokens
		}
		in.cfg.Steps.Step(in.cfg.ID, t, end, info)
	}
	in.eng.ScheduleSub(end, des.PrioStep, in.cfg.ID, pp.commitAct, mb)
	in.ppWake(t)
}

// stageTime is one stage's StepTime of st.
func (in *Instance) stageTime(st *latency.Step) int64 {
	if in.pp.stage != nil {
		return in.pp.stage.StepTime(st)
	}
	return max(1, in.lat.StepTime(st)/int64(in.pp.stages))
}

// ppVictim is the preemption victim by the policy (the tail of the
// running list, or the least urgent request), or −1 when that victim is in
// flight: it cannot be evicted before its micro-batch commits, and
// evicting another request instead (the one that needs the block, say)
// could livelock, so the request needing blocks waits for the commit.
func (in *Instance) ppVictim() int {
	vi := in.victim()
	if in.running[vi].mb != nil {
		return -1
	}
	return vi
}

// onCommit is a micro-batch's last stage ending: its tokens count, its
// finished requests complete.
func (in *Instance) onCommit(now int64, data any) {
	mb := data.(*microBatch)
	pp := &in.pp
	for i, m := range pp.flight {
		if m == mb {
			pp.flight = append(pp.flight[:i], pp.flight[i+1:]...)
			break
		}
	}
	in.lastStep = max(in.lastStep, mb.start)
	var done []*Request
	for _, r := range mb.members {
		if r.mb != mb { // timed out while in flight (and maybe recycled)
			continue
		}
		r.mb = nil
		r.fin = in.settle(r, mb.start, mb.end, mb.idx)
		r.grant = 0
		if in.kv.CPUEnabled() {
			in.kv.SetNow(mb.end)
			in.kv.MirrorToCPU(&r.seq)
		}
		if r.fin != 0 && !(r.DeadlineUs > mb.start && r.DeadlineUs < mb.end) {
			done = append(done, r)
		}
	}
	for _, r := range done {
		in.removeRunning(r)
		in.finish(r, mb.end)
	}
	in.ppWake(now)
}

// ppWake makes sure a Step is pending when a micro-batch could be formed:
// at the time stage 0 frees, if fewer than P are in flight and some
// request waits or runs outside the pipeline. Otherwise a commit or an
// enqueue will wake the instance.
func (in *Instance) ppWake(now int64) {
	pp := &in.pp
	if in.stepPending || len(pp.flight) >= pp.stages {
		return
	}
	work := in.wait.Len() > 0
	for _, r := range in.running {
		work = work || r.mb == nil
	}
	if work {
		in.scheduleStep(max(now, pp.stageFree[0]))
	}
}
