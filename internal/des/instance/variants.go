package instance

import (
	"math"
	"slices"
)

// Batching variants after Vidur (docs/simulator.md §11). They form the batch
// differently and then share the execute and complete phases of the
// reference step (execute); they never use lazy decoding. Decisions they
// share with vllm: a request's grant is capped at max_model_len
// (tokensFor's M rule), KV for running requests is grown on demand and a
// short allocation preempts by the preemption policy (orca,
// faster-transformer and lightllm reserve enough that this never happens
// for requests within their declared budget), nobody is admitted in a step
// that preempted, and P/D decode parts holding reserved blocks are admitted
// first by the vllm rule. Where a variant's admission test could refuse the
// head of the queue forever on an idle instance (a watermark, a batch-token
// product), it is waived while nothing runs, so an idle instance always
// makes progress.

// vllmV0BatchTokens is vllm-v0's cap on batch size × largest prompt.
const vllmV0BatchTokens = 4096

// lightLLMMaxDecodeStreak is the number of consecutive decode batches after
// which lightllm tries a prefill batch although requests are running.
const lightLLMMaxDecodeStreak = 10

// variantStep forms the batch of a variant at t and executes it.
func (in *Instance) variantStep(t int64) (end int64, more bool) {
	for _, r := range in.running {
		r.grant, r.fin = 0, 0
	}
	var reload int64
	switch in.cfg.Batching {
	case BatchSarathi:
		reload = in.formSarathi(t)
	case BatchOrca:
		reload = in.formOrca(t, true)
	case BatchFasterTransformer:
		reload = in.formOrca(t, len(in.running) == 0)
	case BatchVLLMv0:
		reload = in.formV0(t)
	case BatchLightLLM:
		reload = in.formLightLLM(t)
	}
	return in.execute(t, reload)
}

// need is the tokens r may compute this step by the M cap: its need, at
// most M − 1 − progress.
func (in *Instance) need(r *Request) int {
	return max(0, min(r.target()-r.progress, in.cfg.MaxModelLen-1-r.progress))
}

func (r *Request) decoding() bool { return r.g >= 1 && r.target()-r.progress == 1 }

// passRunning grants running requests want(r, budget) tokens each (≤ 0:
// none), in admission order, growing their KV and preempting victims when
// blocks are short; a preempted victim returns its grant to the budget. It
// reports whether anything was preempted.
func (in *Instance) passRunning(t int64, budget *int, want func(r *Request, budget int) int) (preempted bool) {
	for i := 0; i < len(in.running); {
		r := in.running[i]
		if r.grant > 0 {
			i++
			continue
		}
		n := want(r, *budget)
		if n <= 0 {
			i++
			continue
		}
		fits := func() bool {
			grow := r.progress + n - r.seq.Tokens()
			return grow <= 0 || in.kv.Grow(&r.seq, grow)
		}
		rm := in.makeRoom(r, &i, t, fits, in.victim)
		*budget += rm.freed
		preempted = preempted || rm.preempted
		if rm.self {
			continue // r left the list: index i holds the next request
		}
		r.grant = n
		*budget -= n
		i++
	}
	return preempted
}

// cachedPrefix is the prefix-cache hit of w at admission by the vLLM rule
// (at least one token computed), with the CPU tier's blocks.
func (in *Instance) cachedPrefix(w *Request) int {
	target := w.target()
	gpu, cpu := in.kv.Match(&w.seq, target)
	return in.b * min(gpu+cpu, (target-1)/in.b)
}

// admitHeld admits a P/D decode part at the head of the queue the vllm way.
func (in *Instance) admitHeld(w *Request, t int64) (reload int64, n int, ok bool) {
	return in.admit(w, math.MaxInt32, t)
}

// place admits w with its first c tokens cached, KV allocated for alloc
// tokens after them and n tokens granted this step. All or nothing.
func (in *Instance) place(w *Request, c, alloc, n int, t int64) (reload int64, ok bool) {
	in.kv.SetNow(t)
	reload, ok = in.kv.Admit(&w.seq, c, alloc)
	if !ok {
		return 0, false
	}
	in.join(w, c, n, t, false)
	return reload, true
}

// formSarathi: chunk budget C; decodes first, then unfinished prefills,
// then new requests, each prefill chunk min(remaining, C − batch tokens).
// Admission allocates the whole prompt's blocks and keeps a watermark of
// ⌊T/100⌋ free blocks.
func (in *Instance) formSarathi(t int64) (reload int64) {
	budget := in.cfg.ChunkSize
	preempted := in.passRunning(t, &budget, func(r *Request, b int) int {
		if !r.decoding() || b <= 0 {
			return 0
		}
		return in.need(r)
	})
	if in.passRunning(t, &budget, func(r *Request, b int) int {
		if r.decoding() {
			return 0
		}
		return min(in.need(r), b)
	}) {
		preempted = true
	}
	if preempted {
		return 0
	}
	watermark := in.kv.TotalBlocks() / 100
	for len(in.running) < in.cfg.MaxNumSeqs && in.wait.Len() > 0 && budget > 0 {
		w := in.wait.Head()
		if w.held {
			rl, n, ok := in.admit(w, budget, t)
			if !ok {
				break
			}
			reload += rl
			budget -= n
			continue
		}
		c := in.cachedPrefix(w)
		target := w.target()
		fresh := (target - c + in.b - 1) / in.b
		if len(in.running) > 0 && in.kv.FreeBlocks()-fresh < watermark {
			break
		}
		n := min(target-c, budget, max(0, in.cfg.MaxModelLen-1-c))
		if n <= 0 {
			break
		}
		rl, ok := in.place(w, c, target-c, n, t)
		if !ok {
			break
		}
		reload += rl
		budget -= n
	}
	return reload
}

// reservedBlocks is ⌈M/b⌉, what orca and faster-transformer reserve per
// request.
func (in *Instance) reservedBlocks() int { return (in.cfg.MaxModelLen + in.b - 1) / in.b }

// outstanding is Σ over running requests of the reserved blocks they do
// not hold yet.
func (in *Instance) outstanding() int {
	m, s := in.reservedBlocks(), 0
	for _, r := range in.running {
		s += max(0, m-r.seq.Blocks())
	}
	return s
}

// formOrca: every running request gets its need (a decode token; whole
// prompts were computed at admission), then, if admit, waiting requests
// join whole while S allows and the free blocks cover every running
// request's reservation of ⌈M/b⌉ blocks plus the newcomer's: free −
// Σ(⌈M/b⌉ − held) ≥ ⌈M/b⌉. The reservation keeps every later growth
// within the free blocks, so nothing is preempted (P/D decode parts, which
// arrive with blocks reserved outside this rule, are the exception). With
// admit false (faster-transformer while its batch runs) nobody joins.
func (in *Instance) formOrca(t int64, admit bool) (reload int64) {
	budget := math.MaxInt32
	if in.passRunning(t, &budget, func(r *Request, _ int) int { return in.need(r) }) || !admit {
		return 0
	}
	m := in.reservedBlocks()
	for len(in.running) < in.cfg.MaxNumSeqs && in.wait.Len() > 0 {
		w := in.wait.Head()
		if w.held {
			// A P/D decode part holds its prompt's blocks already; making
			// it wait for a full reservation could deadlock two of them.
			rl, _, ok := in.admitHeld(w, t)
			if !ok {
				break
			}
			reload += rl
			continue
		}
		if in.kv.FreeBlocks()-in.outstanding() < m {
			break
		}
		c := in.cachedPrefix(w)
		n := min(w.target()-c, max(0, in.cfg.MaxModelLen-1-c))
		if n <= 0 {
			break
		}
		rl, ok := in.place(w, c, n, n, t)
		if !ok {
			break
		}
		reload += rl
	}
	return reload
}

// formV0 (vLLM v0, prefill first): if waiting requests can be admitted —
// free blocks minus the newcomer's fresh blocks stay ≥ ⌊T/100⌋, the batch
// size times the largest prompt stays ≤ 4096 tokens, fewer than S run —
// the step runs only those whole prompts. Otherwise every running request
// gets one decode token in admission order, preempting from the tail when
// a block is missing.
func (in *Instance) formV0(t int64) (reload int64) {
	watermark := in.kv.TotalBlocks() / 100
	admitted, longest := 0, 0
	for len(in.running) < in.cfg.MaxNumSeqs && in.wait.Len() > 0 {
		w := in.wait.Head()
		if w.held {
			rl, _, ok := in.admitHeld(w, t)
			if !ok {
				break
			}
			reload += rl
			admitted++
			continue
		}
		c := in.cachedPrefix(w)
		target := w.target()
		fresh := (target - c + in.b - 1) / in.b
		idle := len(in.running) == 0
		if !idle && in.kv.FreeBlocks()-fresh < watermark {
			break
		}
		if admitted > 0 && (admitted+1)*max(longest, target) > vllmV0BatchTokens {
			break
		}
		n := min(target-c, max(0, in.cfg.MaxModelLen-1-c))
		if n <= 0 {
			break
		}
		rl, ok := in.place(w, c, n, n, t)
		if !ok {
			break
		}
		reload += rl
		admitted++
		longest = max(longest, target)
	}
	if admitted > 0 {
		return reload
	}
	budget := math.MaxInt32
	in.passRunning(t, &budget, func(r *Request, _ int) int { return in.need(r) })
	return 0
}

// formLightLLM: token-level KV (block size 1); a batch is prefill-only or
// decode-only. A prefill batch is tried when nothing runs, or after 10
// consecutive decode batches; it admits whole prompts (Σ new tokens within
// max-num-batched-tokens, the first always) while the projected peak token
// use of the running and admitted requests, each assumed to run to its
// max_output_len, fits T. Otherwise every running request decodes.
func (in *Instance) formLightLLM(t int64) (reload int64) {
	if (len(in.running) == 0 || in.decodeStreak >= lightLLMMaxDecodeStreak) && in.wait.Len() > 0 {
		budget, admitted := in.cfg.MaxNumBatchedTokens, 0
		for len(in.running) < in.cfg.MaxNumSeqs && in.wait.Len() > 0 {
			w := in.wait.Head()
			if w.held {
				rl, n, ok := in.admitHeld(w, t)
				if !ok {
					break
				}
				reload += rl
				budget -= n
				admitted++
				continue
			}
			c := in.cachedPrefix(w)
			n := min(w.target()-c, max(0, in.cfg.MaxModelLen-1-c))
			if n <= 0 || (admitted > 0 && n > budget) || !in.peakFits(w) {
				break
			}
			rl, ok := in.place(w, c, n, n, t)
			if !ok {
				break
			}
			reload += rl
			budget -= n
			admitted++
		}
		if admitted > 0 {
			in.decodeStreak = 0
			return reload
		}
	}
	if len(in.running) > 0 {
		in.decodeStreak++
	}
	budget := math.MaxInt32
	in.passRunning(t, &budget, func(r *Request, _ int) int { return in.need(r) })
	return 0
}

// peakFits reports whether the running requests plus w, each holding its
// tokens now and growing by one per step until its max_output_len, never
// need more than T tokens together. Sorted by remaining steps r descending,
// the use at step r_(i) is Σ_{j≤i} c_j + (i+1)·r_(i); the peak is the
// largest of these.
func (in *Instance) peakFits(w *Request) bool {
	type load struct{ cur, rem int }
	ls := make([]load, 0, len(in.running)+1)
	add := func(r *Request) {
		ls = append(ls, load{cur: r.target(), rem: max(0, r.MaxOutputLen-r.g)})
	}
	for _, r := range in.running {
		add(r)
	}
	add(w)
	slices.SortFunc(ls, func(a, b load) int { return b.rem - a.rem })
	sum, peak := 0, 0
	for i, l := range ls {
		sum += l.cur
		peak = max(peak, sum+(i+1)*l.rem)
	}
	return peak <= in.kv.TotalBlocks()*in.b
}
