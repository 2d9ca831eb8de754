package timeline

import (
	"strconv"

	"servesim/internal/des/instance"
)

// Request states as the timeline sees them.
const (
	stateWaiting = iota
	stateRunning
	stateDone
)

type span struct {
	name       string
	start, end int64
}

// track is what a lane keeps of one live request.
type track struct {
	req       *instance.Request
	start     int64 // the request slice's start: arrival, or a decode part's transfer start
	spans     []span
	state     int
	since     int64 // start of the current state
	preempted bool  // waited again after a preemption: its next run recomputes
	firstTok  int64 // end of the step that produced the first token of the current run; -1 none
	gen       int   // generated tokens when the current step began
	slot      int   // index in lane.batch while running
}

// stepState is a step the instance executed, written at the next engine
// event (its completions have happened by then).
type stepState struct {
	open  bool
	start int64
	info  instance.StepInfo
}

// lane is one instance's part of the timeline: its process, its live
// requests and its running batch. It is the instance's Tracer.
type lane struct {
	r     *Recorder
	in    *instance.Instance
	pid   int
	live  map[*instance.Request]*track
	batch []*track
	step  stepState
	last  instance.Counters // at the previous step's close
}

// Scheduled implements instance.Tracer: a request joins the batch.
func (l *lane) Scheduled(now int64, req *instance.Request, _ int) {
	t := l.track(req)
	name := "queued"
	if t.preempted {
		name = "preempted"
	}
	t.add(name, t.since, now)
	t.state, t.since, t.firstTok = stateRunning, now, -1
	t.gen = req.Generated()
	t.slot = len(l.batch)
	l.batch = append(l.batch, t)
}

// Preempted implements instance.Tracer: a request leaves the batch for the
// wait queue.
func (l *lane) Preempted(now int64, req *instance.Request) {
	t, ok := l.live[req]
	if !ok || t.state != stateRunning {
		return
	}
	l.closeRun(t, now)
	t.state, t.since, t.preempted = stateWaiting, now, true
}

// Left implements instance.Tracer: a request completed at the end of the
// current step.
func (l *lane) Left(at int64, req *instance.Request) {
	t, ok := l.live[req]
	if !ok || t.state != stateRunning {
		return
	}
	l.account(t, at)
	l.closeRun(t, at)
	t.state, t.since = stateDone, at
}

// transfer starts a P/D decode part's track with its KV transfer.
func (l *lane) transfer(start, end int64, req *instance.Request) {
	t := l.track(req)
	t.start = start
	t.add("kv_transfer", start, end)
	t.since = max(end, start)
}

// done writes a request the instance is done with: terminal, or live at
// the end of the run (DoneUs < 0).
func (l *lane) done(res *instance.Result, req *instance.Request) {
	t, ok := l.live[req]
	if !ok {
		t = &track{req: req, start: res.ArrivalUs, since: res.ArrivalUs}
	}
	end := res.DoneUs
	if end < 0 {
		end = max(l.r.now, t.since)
	}
	switch t.state {
	case stateWaiting:
		name := "queued"
		if t.preempted {
			name = "preempted"
		}
		t.add(name, t.since, end)
	case stateRunning:
		l.closeRun(t, end)
	}
	l.writeRequest(t, res, end)
	delete(l.live, req)
}

func (l *lane) track(req *instance.Request) *track {
	t, ok := l.live[req]
	if !ok {
		t = &track{req: req, start: req.ArrivalUs, since: req.ArrivalUs, firstTok: -1}
		l.live[req] = t
	}
	return t
}

func (t *track) add(name string, start, end int64) {
	if end > start {
		t.spans = append(t.spans, span{name, start, end})
	}
}

// closeRun ends t's current run at end: the part before its first token
// is prefill (recompute after a preemption), the rest decode.
func (l *lane) closeRun(t *track, end int64) {
	pre := "prefill"
	if t.preempted {
		pre = "recompute"
	}
	if t.firstTok < 0 || t.firstTok > end {
		t.add(pre, t.since, end)
	} else {
		t.add(pre, t.since, t.firstTok)
		t.add("decode", t.firstTok, end)
	}
	last := len(l.batch) - 1
	moved := l.batch[last]
	l.batch[t.slot], moved.slot = moved, t.slot
	l.batch[last] = nil
	l.batch = l.batch[:last]
}

// account notes the step's end as t's first token of the run if the step
// ending at end produced one.
func (l *lane) account(t *track, end int64) {
	g := t.req.Generated()
	if t.firstTok < 0 && g > t.gen {
		t.firstTok = end
	}
	t.gen = g
}

// closeStep writes the step the instance reported: its slice on the steps
// track (length = the busy time it added: a pipeline's first stage), and
// the KV and batch counters at its start and, when the instance idles
// after it, at its end.
func (l *lane) closeStep() {
	st := &l.step
	st.open = false
	c := l.in.Counters()
	n := c.Steps - l.last.Steps
	dur := c.BusyUs - l.last.BusyUs
	l.last = c
	if n <= 0 || dur <= 0 {
		return
	}
	end := st.start + dur
	for _, t := range l.batch {
		l.account(t, end)
	}
	in := st.info
	name := "step"
	if n > 1 {
		name = "steps x" + strconv.FormatInt(n, 10)
	}
	l.r.steps++
	b := l.r.open('X', name, l.pid, tidSteps, st.start)
	b = appendArg(b, "dur", dur, false)
	b = append(b, `,"args":{`...)
	b = appendArg(b, "batch_size", int64(in.Batch), true)
	b = appendArg(b, "prefill_tokens", int64(in.PrefillTokens), false)
	b = appendArg(b, "decode_tokens", int64(in.DecodeTokens), false)
	b = appendArg(b, "generated_tokens", int64(in.Generated), false)
	b = appendArg(b, "kv_blocks_used", int64(in.KVUsedBlocks), false)
	l.r.write(append(b, "}}"...))
	l.counters(st.start, int64(in.KVUsedBlocks), int64(in.Batch), int64(in.Waiting))
	if !l.in.StepPending() {
		// The instance idles from the step's end: show what it holds then.
		l.counters(end, int64(l.in.KV().UsedBlocks()), int64(l.in.BatchSize()), int64(l.in.QueueDepth()))
	}
}

func (l *lane) counters(at, kv, running, waiting int64) {
	b := l.r.open('C', "kv_cache", l.pid, 0, at)
	b = append(b, `,"args":{`...)
	b = appendArg(b, "used_blocks", kv, true)
	l.r.write(append(b, "}}"...))
	b = l.r.open('C', "batch", l.pid, 0, at)
	b = append(b, `,"args":{`...)
	b = appendArg(b, "running", running, true)
	b = appendArg(b, "waiting", waiting, false)
	l.r.write(append(b, "}}"...))
}

// writeRequest writes a request as nested async slices: the whole request,
// and inside it each queued, prefill, decode, preempted, recompute and
// (P/D decode part) kv_transfer part. A P/D prefill part has its own
// category, as it shares the request's id with the decode part.
func (l *lane) writeRequest(t *track, res *instance.Result, end int64) {
	id := res.ID
	start := t.start
	if len(t.spans) > 0 {
		start = min(start, t.spans[0].start)
		end = max(end, t.spans[len(t.spans)-1].end)
	}
	cat := "request"
	if t.req.PrefillOnly {
		cat = "prefill_part"
	}
	b := l.async('b', "request", cat, id, start)
	b = append(b, `,"args":{`...)
	b = appendArg(b, "request_id", id, true)
	b = appendStr(b, "status", res.Status.String())
	b = appendArg(b, "prompt_tokens", int64(res.PromptTokens), false)
	b = appendArg(b, "cached_prompt_tokens", int64(res.CachedPromptTokens), false)
	b = appendArg(b, "output_tokens", int64(res.OutputTokens), false)
	b = appendArg(b, "preemptions", int64(res.Preemptions), false)
	if res.TTFTUs >= 0 {
		b = appendArg(b, "ttft_us", res.TTFTUs, false)
	}
	if res.E2EUs >= 0 {
		b = appendArg(b, "e2e_us", res.E2EUs, false)
	}
	l.r.write(append(b, "}}"...))
	for _, s := range t.spans {
		l.r.write(append(l.async('b', s.name, cat, id, s.start), '}'))
		l.r.write(append(l.async('e', s.name, cat, id, s.end), '}'))
	}
	l.r.write(append(l.async('e', "request", cat, id, end), '}'))
}

func (l *lane) async(ph byte, name, cat string, id, ts int64) []byte {
	b := l.r.open(ph, name, l.pid, tidRequests, ts)
	b = append(b, `,"cat":"`...)
	b = append(b, cat...)
	b = append(b, `","id":`...)
	return strconv.AppendInt(b, id, 10)
}
