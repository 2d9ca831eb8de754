package timeline

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"servesim/internal/des"
	"servesim/internal/des/instance"
)

// Thread ids inside an instance's process.
const (
	tidSteps    = 1
	tidRequests = 2
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

// track is what the recorder keeps of one live request.
type track struct {
	req       *instance.Request
	spans     []span
	state     int
	since     int64 // start of the current state
	preempted bool  // waited again after a preemption: its next run recomputes
	firstTok  int64 // end of the step that produced the first token of the current run; -1 none
	prog, gen int   // progress and generated tokens when the current step began
	slot      int   // index in Recorder.batch while running
}

// stepState is the step being executed (opened before its engine event
// runs, closed before the next event runs, when its effects are final).
type stepState struct {
	open    bool
	start   int64
	cnt     instance.Counters
	left    bool // a request left during the step: batch is the size it ran with
	batch   int
	prefill int64 // prompt (and recompute) tokens of requests that left
	decode  int64 // decode tokens of requests that left
	hooked  int   // steps the instance reported through the step hook
	info    instance.StepInfo
}

// Recorder writes one simulation's timeline. Use New, hand it to
// replay.Config.Observer, and check the error Finish returns.
type Recorder struct {
	w     *bufio.Writer
	err   error
	buf   []byte
	first bool

	in    *instance.Instance
	pid   int
	now   int64
	live  map[*instance.Request]*track
	batch []*track
	step  stepState
	steps int64
}

// New returns a recorder writing to w. Nothing is written before Start.
func New(w io.Writer) *Recorder {
	return &Recorder{w: bufio.NewWriterSize(w, 256<<10), first: true, live: map[*instance.Request]*track{}}
}

// Steps is the number of step slices written.
func (r *Recorder) Steps() int64 { return r.steps }

// Start writes the file's head and the instance's track names.
func (r *Recorder) Start(in *instance.Instance) {
	r.in, r.pid = in, in.ID()
	r.write([]byte(`{"displayTimeUnit":"ms","otherData":{"time_unit":"us"},"traceEvents":[`))
	name := fmt.Sprintf("instance_%d (%d KV blocks of %d tokens)", r.pid, in.KV().TotalBlocks(), in.KV().BlockSize())
	r.meta("process_name", 0, name)
	r.meta("thread_name", tidSteps, "steps")
	r.meta("thread_name", tidRequests, "requests")
}

// Event implements replay.Observer: it closes the step that ran before
// and opens the one about to run.
func (r *Recorder) Event(atUs int64, prio int) {
	r.now = atUs
	if r.step.open {
		r.closeStep()
	}
	if prio == des.PrioStep {
		r.openStep(atUs)
	}
}

// Step implements instance.StepObserver: the instance's own account of the
// step being executed, which the step slice reports as it is.
func (r *Recorder) Step(_ int, _, _ int64, info instance.StepInfo) {
	r.step.hooked++
	r.step.info = info
}

// Scheduled implements instance.Tracer: a request joins the batch.
func (r *Recorder) Scheduled(now int64, req *instance.Request, _ int) {
	t := r.track(req)
	name := "queued"
	if t.preempted {
		name = "preempted"
	}
	t.add(name, t.since, now)
	t.state, t.since, t.firstTok = stateRunning, now, -1
	t.prog, t.gen = req.Progress(), req.Generated()
	t.slot = len(r.batch)
	r.batch = append(r.batch, t)
}

// Preempted implements instance.Tracer: a request leaves the batch for the
// wait queue.
func (r *Recorder) Preempted(now int64, req *instance.Request) {
	t, ok := r.live[req]
	if !ok || t.state != stateRunning {
		return
	}
	r.closeRun(t, now)
	t.state, t.since, t.preempted = stateWaiting, now, true
}

// Left implements instance.Tracer: a request completed at the end of the
// current step.
func (r *Recorder) Left(at int64, req *instance.Request) {
	t, ok := r.live[req]
	if !ok || t.state != stateRunning {
		return
	}
	if r.step.open && !r.step.left {
		r.step.left, r.step.batch = true, len(r.batch)
	}
	p, d := r.account(t, at)
	r.step.prefill += p
	r.step.decode += d
	r.closeRun(t, at)
	t.state, t.since = stateDone, at
}

// Result implements replay.Observer: the request is terminal (or live at
// the end of the run); its slices are written.
func (r *Recorder) Result(res *instance.Result, req *instance.Request) {
	t, ok := r.live[req]
	if !ok {
		t = &track{req: req, since: res.ArrivalUs}
	}
	end := res.DoneUs
	if end < 0 {
		end = max(r.now, t.since)
	}
	switch t.state {
	case stateWaiting:
		name := "queued"
		if t.preempted {
			name = "preempted"
		}
		t.add(name, t.since, end)
	case stateRunning:
		r.closeRun(t, end)
	}
	r.writeRequest(t, res, end)
	delete(r.live, req)
}

// Finish closes the last step and the JSON document and flushes it.
func (r *Recorder) Finish(endUs int64) error {
	r.now = max(r.now, endUs)
	if r.step.open {
		r.closeStep()
	}
	r.write([]byte("\n]}\n"))
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	if r.err != nil {
		return fmt.Errorf("timeline: %w", r.err)
	}
	return nil
}

func (r *Recorder) track(req *instance.Request) *track {
	t, ok := r.live[req]
	if !ok {
		t = &track{req: req, since: req.ArrivalUs, firstTok: -1}
		r.live[req] = t
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
func (r *Recorder) closeRun(t *track, end int64) {
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
	last := len(r.batch) - 1
	moved := r.batch[last]
	r.batch[t.slot], moved.slot = moved, t.slot
	r.batch[last] = nil
	r.batch = r.batch[:last]
}

// account returns the prefill and decode tokens t got in the step ending at
// end, and notes the step's end if it produced t's first token of the run.
func (r *Recorder) account(t *track, end int64) (prefill, decode int64) {
	d := int64(t.req.Progress() - t.prog)
	if d > 0 {
		if t.gen >= 1 && d == 1 {
			decode = 1
		} else {
			prefill = d
		}
	}
	if t.firstTok < 0 && t.req.Generated() > t.gen {
		t.firstTok = end
	}
	return prefill, decode
}

func (r *Recorder) openStep(at int64) {
	r.step = stepState{open: true, start: at, cnt: r.in.Counters()}
	for _, t := range r.batch {
		t.prog, t.gen = t.req.Progress(), t.req.Generated()
	}
}

func (r *Recorder) closeStep() {
	st := &r.step
	st.open = false
	c := r.in.Counters()
	n := c.Steps - st.cnt.Steps
	if n <= 0 {
		return
	}
	dur := c.BusyUs - st.cnt.BusyUs
	end := st.start + dur
	batch := len(r.batch)
	if st.left {
		batch = st.batch
	}
	prefill, decode := st.prefill, st.decode
	for _, t := range r.batch {
		p, d := r.account(t, end)
		prefill += p
		decode += d
	}
	kv := int64(0)
	if dur > 0 {
		kv = (c.KVUsedBlockUs - st.cnt.KVUsedBlockUs) / dur
	}
	generated := c.OutputTokens - st.cnt.OutputTokens
	if n == 1 && st.hooked == 1 {
		// One step, described by the instance itself.
		in := st.info
		batch, prefill, decode = in.Batch, int64(in.PrefillTokens), int64(in.DecodeTokens)
		generated, kv = int64(in.Generated), int64(in.KVUsedBlocks)
	}
	name := "step"
	if n > 1 {
		name = "steps x" + strconv.FormatInt(n, 10)
	}
	r.steps++
	b := r.open('X', name, tidSteps, st.start)
	b = appendArg(b, "dur", dur, false)
	b = append(b, `,"args":{`...)
	b = appendArg(b, "batch_size", int64(batch), true)
	b = appendArg(b, "prefill_tokens", prefill, false)
	b = appendArg(b, "decode_tokens", decode, false)
	b = appendArg(b, "generated_tokens", generated, false)
	b = appendArg(b, "kv_blocks_used", kv, false)
	r.write(append(b, "}}"...))
	// The wait queue does not change during a step but for its own
	// admissions and preemptions: its depth now is the depth while it ran.
	r.counters(st.start, kv, int64(batch), int64(r.in.QueueDepth()))
	if !r.in.StepPending() {
		// The instance idles from the step's end: show what it holds then.
		r.counters(end, int64(r.in.KV().UsedBlocks()), int64(r.in.BatchSize()), int64(r.in.QueueDepth()))
	}
}

func (r *Recorder) counters(at, kv, running, waiting int64) {
	b := r.open('C', "kv_cache", 0, at)
	b = append(b, `,"args":{`...)
	b = appendArg(b, "used_blocks", kv, true)
	r.write(append(b, "}}"...))
	b = r.open('C', "batch", 0, at)
	b = append(b, `,"args":{`...)
	b = appendArg(b, "running", running, true)
	b = appendArg(b, "waiting", waiting, false)
	r.write(append(b, "}}"...))
}

// writeRequest writes a request as nested async slices: the whole request,
// and inside it each queued, prefill, decode, preempted and recompute part.
func (r *Recorder) writeRequest(t *track, res *instance.Result, end int64) {
	id := res.ID
	start := res.ArrivalUs
	if len(t.spans) > 0 {
		start = min(start, t.spans[0].start)
		end = max(end, t.spans[len(t.spans)-1].end)
	}
	b := r.async('b', "request", id, start)
	b = append(b, `,"args":{`...)
	b = appendArg(b, "request_id", id, true)
	b = append(b, `,"status":"`...)
	b = append(b, res.Status.String()...)
	b = append(b, '"')
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
	r.write(append(b, "}}"...))
	for _, s := range t.spans {
		r.write(append(r.async('b', s.name, id, s.start), '}'))
		r.write(append(r.async('e', s.name, id, s.end), '}'))
	}
	r.write(append(r.async('e', "request", id, end), '}'))
}

// open starts an event object: {"ph":..,"name":..,"pid":..,"tid":..,"ts":..
// (left open for more fields).
func (r *Recorder) open(ph byte, name string, tid int, ts int64) []byte {
	b := r.buf[:0]
	if r.first {
		r.first = false
		b = append(b, '\n')
	} else {
		b = append(b, ",\n"...)
	}
	b = append(b, `{"ph":"`...)
	b = append(b, ph)
	b = append(b, `","name":`...)
	b = strconv.AppendQuote(b, name)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(r.pid), 10)
	if tid > 0 {
		b = append(b, `,"tid":`...)
		b = strconv.AppendInt(b, int64(tid), 10)
	}
	b = append(b, `,"ts":`...)
	return strconv.AppendInt(b, ts, 10)
}

func (r *Recorder) async(ph byte, name string, id, ts int64) []byte {
	b := r.open(ph, name, tidRequests, ts)
	b = append(b, `,"cat":"request","id":`...)
	return strconv.AppendInt(b, id, 10)
}

func (r *Recorder) meta(name string, tid int, value string) {
	b := r.open('M', name, tid, 0)
	b = append(b, `,"args":{"name":`...)
	b = strconv.AppendQuote(b, value)
	r.write(append(b, "}}"...))
}

func appendArg(b []byte, key string, v int64, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendInt(b, v, 10)
}

func (r *Recorder) write(b []byte) {
	r.buf = b[:0]
	if r.err != nil {
		return
	}
	if _, err := r.w.Write(b); err != nil {
		r.err = err
	}
}
