package timeline

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"servesim/internal/des/instance"
)

// Thread ids inside an instance's process.
const (
	tidSteps    = 1
	tidRequests = 2
)

// Thread ids inside the router's process.
const (
	tidRouting   = 1
	tidAdmission = 2
	tidTransfers = 3
)

// Recorder writes one simulation's timeline. Use New; install Tracer(i)
// and the Recorder itself (the step hook) in every instance's
// configuration, call Start with the instances, forward engine events,
// results (one instance) or cluster events, and check the error Finish
// returns.
type Recorder struct {
	w     *bufio.Writer
	err   error
	buf   []byte
	first bool

	lanes   []*lane
	pending []*lane // lanes with a step to close at the next engine event
	now     int64
	router  int                // the router's pid: the number of instances
	named   bool               // the router's process is named
	split   map[int64]struct{} // P/D requests routed to prefill, not yet to decode
	steps   int64
}

// New returns a recorder writing to w. Nothing is written before Start.
func New(w io.Writer) *Recorder {
	return &Recorder{w: bufio.NewWriterSize(w, 256<<10), first: true, split: map[int64]struct{}{}}
}

// Steps is the number of step slices written.
func (r *Recorder) Steps() int64 { return r.steps }

// Tracer returns the tracer to install in instance i's configuration.
func (r *Recorder) Tracer(i int) instance.Tracer { return r.lane(i) }

func (r *Recorder) lane(i int) *lane {
	for len(r.lanes) <= i {
		r.lanes = append(r.lanes, &lane{r: r, pid: len(r.lanes), live: map[*instance.Request]*track{}})
	}
	return r.lanes[i]
}

// Start writes the file's head and names every instance's process and
// tracks; pools[i], if given and not empty, is instance i's P/D pool.
func (r *Recorder) Start(insts []*instance.Instance, pools []string) {
	r.write([]byte(`{"displayTimeUnit":"ms","otherData":{"time_unit":"us"},"traceEvents":[`))
	for i, in := range insts {
		l := r.lane(i)
		l.in, l.last = in, in.Counters()
		pool := ""
		if i < len(pools) && pools[i] != "" {
			pool = " " + pools[i]
		}
		name := fmt.Sprintf("instance_%d%s (%d KV blocks of %d tokens)", i, pool, in.KV().TotalBlocks(), in.KV().BlockSize())
		r.meta("process_name", i, 0, name)
		r.meta("thread_name", i, tidSteps, "steps")
		r.meta("thread_name", i, tidRequests, "requests")
	}
	r.router = len(insts)
}

// Step implements instance.StepObserver: instance inst executed a step.
// Its slice is written at the next engine event, when the step's
// completions have happened.
func (r *Recorder) Step(inst int, start, _ int64, info instance.StepInfo) {
	l := r.lane(inst)
	if l.step.open {
		l.closeStep() // never with one engine event per step; kept safe
	} else {
		r.pending = append(r.pending, l)
	}
	l.step = stepState{open: true, start: start, info: info}
}

// Event is the engine's observer: it closes the steps executed by the
// event that ran before.
func (r *Recorder) Event(atUs int64, _ int) {
	r.now = atUs
	r.closeSteps()
}

func (r *Recorder) closeSteps() {
	for _, l := range r.pending {
		if l.step.open {
			l.closeStep()
		}
	}
	clear(r.pending)
	r.pending = r.pending[:0]
}

// Result is a one-instance run's terminal (or, after the run, live)
// request: its slices are written. Cluster runs report through
// InstanceDone instead.
func (r *Recorder) Result(res *instance.Result, req *instance.Request) {
	r.lane(0).done(res, req)
}

// InstanceDone implements cluster.Observer: instance inst is done with
// req.
func (r *Recorder) InstanceDone(inst int, res *instance.Result, req *instance.Request) {
	if req.PrefillOnly && res.Status != instance.StatusPrefilled {
		delete(r.split, req.ID) // no decode part follows
	}
	r.lane(inst).done(res, req)
}

// Routed implements cluster.Observer: an instant on the router's routing
// track.
func (r *Recorder) Routed(now int64, req *instance.Request, inst int, pool string) {
	r.nameRouter()
	part := "whole"
	if req.PrefillOnly {
		part = "prefill"
		r.split[req.ID] = struct{}{}
	} else if _, ok := r.split[req.ID]; ok {
		part = "decode"
		delete(r.split, req.ID)
	}
	b := r.open('i', "routed", r.router, tidRouting, now)
	b = append(b, `,"s":"t","args":{`...)
	b = appendArg(b, "request_id", req.ID, true)
	b = appendArg(b, "instance", int64(inst), false)
	b = appendStr(b, "pool", pool)
	b = appendStr(b, "part", part)
	r.write(append(b, "}}"...))
}

// Refused implements cluster.Observer: an instant on the router's
// admission track.
func (r *Recorder) Refused(now int64, req *instance.Request, reason string) {
	r.nameRouter()
	delete(r.split, req.ID)
	b := r.open('i', reason, r.router, tidAdmission, now)
	b = append(b, `,"s":"t","args":{`...)
	b = appendArg(b, "request_id", req.ID, true)
	b = appendArg(b, "prompt_tokens", int64(len(req.Prompt)), false)
	r.write(append(b, "}}"...))
}

// Transfer implements cluster.Observer: an async slice on the router's
// transfer track, and the decode part's first slice on its instance.
func (r *Recorder) Transfer(start, end int64, req *instance.Request, from, to int) {
	r.nameRouter()
	b := r.open('b', "kv_transfer", r.router, tidTransfers, start)
	b = append(b, `,"cat":"kv_transfer","id":`...)
	b = strconv.AppendInt(b, req.ID, 10)
	b = append(b, `,"args":{`...)
	b = appendArg(b, "request_id", req.ID, true)
	b = appendArg(b, "from_instance", int64(from), false)
	b = appendArg(b, "to_instance", int64(to), false)
	b = appendArg(b, "prompt_tokens", int64(len(req.Prompt)), false)
	r.write(append(b, "}}"...))
	b = r.open('e', "kv_transfer", r.router, tidTransfers, end)
	b = append(b, `,"cat":"kv_transfer","id":`...)
	b = strconv.AppendInt(b, req.ID, 10)
	r.write(append(b, '}'))
	r.lane(to).transfer(start, end, req)
}

func (r *Recorder) nameRouter() {
	if r.named {
		return
	}
	r.named = true
	r.meta("process_name", r.router, 0, "router")
	r.meta("thread_name", r.router, tidRouting, "routing")
	r.meta("thread_name", r.router, tidAdmission, "admission")
	r.meta("thread_name", r.router, tidTransfers, "kv transfers")
}

// Finish closes the last steps and the JSON document and flushes it.
func (r *Recorder) Finish(endUs int64) error {
	r.now = max(r.now, endUs)
	r.closeSteps()
	r.write([]byte("\n]}\n"))
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = err
	}
	if r.err != nil {
		return fmt.Errorf("timeline: %w", r.err)
	}
	return nil
}

// open starts an event object: {"ph":..,"name":..,"pid":..,"tid":..,"ts":..
// (left open for more fields).
func (r *Recorder) open(ph byte, name string, pid, tid int, ts int64) []byte {
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
	b = strconv.AppendInt(b, int64(pid), 10)
	if tid > 0 {
		b = append(b, `,"tid":`...)
		b = strconv.AppendInt(b, int64(tid), 10)
	}
	b = append(b, `,"ts":`...)
	return strconv.AppendInt(b, ts, 10)
}

func (r *Recorder) meta(name string, pid, tid int, value string) {
	b := r.open('M', name, pid, tid, 0)
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

func appendStr(b []byte, key, v string) []byte {
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendQuote(b, v)
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
