package replay

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sync/atomic"

	"servesim/internal/tracev2"
)

// ResultWriter writes SimResults sorted by request_id (docs/tracev2.md §9) while
// they arrive in completion order: a result is written as soon as every
// smaller request id is settled, so only the results that overtook a
// slower request are held. The bytes are those of tracev2.WriteSimResults
// for the same results.
//
// The JSON is encoded and written on a goroutine of its own, in batches
// handed over in order: on two cores it stays out of the
// simulation's time. A writing error stops the next Settle.
type ResultWriter struct {
	format  tracev2.SimResultFormat
	ids     func() []int64 // every request id that may settle, ascending
	next    int
	pending map[int64]*tracev2.SimResult // settled, not yet written; nil = no result
	err     error

	batch  []tracev2.SimResult      // in order, for the writing goroutine
	work   chan []tracev2.SimResult // a nil batch asks for synced
	spare  chan []tracev2.SimResult // batches back from it, for reuse
	synced chan struct{}
	done   chan struct{}
	failed atomic.Pointer[error] // the writing goroutine's error
	ended  bool

	// The writing goroutine's (the caller's after it ended).
	w       *bufio.Writer
	written int
	buf     []byte
	werr    error
}

// resultBatch is the number of results handed to the writing goroutine at
// once.
const resultBatch = 256

// NewResultWriter writes to w the results of the requests whose ids ids
// returns (ascending: Trace.RequestIDs). The list may grow between calls,
// as a streamed trace's does, as long as every id is in it before its
// result settles. Close (or Stop) ends its writing goroutine.
func NewResultWriter(w io.Writer, format tracev2.SimResultFormat, ids func() []int64) *ResultWriter {
	r := &ResultWriter{w: bufio.NewWriterSize(w, 64<<10), format: format, ids: ids, pending: map[int64]*tracev2.SimResult{},
		work: make(chan []tracev2.SimResult, 4), spare: make(chan []tracev2.SimResult, 6), synced: make(chan struct{}),
		done: make(chan struct{})}
	go r.run()
	return r
}

// Settle records the outcome of request id: its SimResult, or nil when it
// did not complete (or will never be injected).
func (r *ResultWriter) Settle(id int64, res *tracev2.SimResult) error {
	if r.err != nil {
		return r.err
	}
	ids := r.ids()
	if r.next < len(ids) && ids[r.next] == id {
		// Its turn: most results of a trace replayed at its own pace.
		r.next++
		if res != nil {
			r.emit(res)
		}
	} else {
		var keep *tracev2.SimResult
		if res != nil {
			cp := *res
			keep = &cp
		}
		r.pending[id] = keep
	}
	for r.next < len(ids) && r.err == nil && len(r.pending) > 0 {
		v, ok := r.pending[ids[r.next]]
		if !ok {
			break
		}
		delete(r.pending, ids[r.next])
		r.next++
		if v != nil {
			r.emit(v)
		}
	}
	return r.err
}

// Close writes the results still held, in request_id order (requests never
// settled have none), ends the array and flushes.
func (r *ResultWriter) Close() error {
	for ids := r.ids(); r.next < len(ids) && r.err == nil; r.next++ {
		if v := r.pending[ids[r.next]]; v != nil {
			r.emit(v)
		}
	}
	r.Stop()
	if r.err != nil {
		return r.err
	}
	switch {
	case r.format == tracev2.SimResultJSONL:
	case r.written == 0:
		r.put([]byte("[]\n"))
	default:
		r.put([]byte("\n]\n"))
	}
	if err := r.w.Flush(); err != nil && r.werr == nil {
		r.werr = fmt.Errorf("write sim results: %w", err)
	}
	return r.werr
}

// Stop hands over what was emitted and waits for the writing goroutine to
// end, without finishing the output (a failed run's).
func (r *ResultWriter) Stop() {
	if r.ended {
		return
	}
	r.ended = true
	if len(r.batch) > 0 && r.err == nil {
		r.work <- r.batch
	}
	close(r.work)
	<-r.done
	if r.err == nil {
		r.err = r.werr
	}
}

// Sync waits until the writing goroutine has written (to its buffer) every
// result handed over so far and is idle: until the next Settle, the
// io.Writer is not written to.
func (r *ResultWriter) Sync() {
	if r.ended {
		return
	}
	if len(r.batch) > 0 && r.err == nil {
		r.work <- r.batch
		r.batch = nil
	}
	r.work <- nil
	<-r.synced
}

// emit hands v, in its order, to the writing goroutine.
func (r *ResultWriter) emit(v *tracev2.SimResult) {
	for _, x := range []float64{v.TTFTUs, v.E2EUs, v.ITLMeanUs, v.SchedulingDelayUs, v.WaitInFlightUs, v.StepInFlightUs} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			r.err = fmt.Errorf("write sim results: request %d: time %v is not finite", v.RequestID, x)
			return
		}
	}
	if r.ended {
		r.err = fmt.Errorf("write sim results: request %d settled after the writer stopped", v.RequestID)
		return
	}
	if r.batch == nil {
		select {
		case r.batch = <-r.spare:
		default:
			r.batch = make([]tracev2.SimResult, 0, resultBatch)
		}
	}
	r.batch = append(r.batch, *v)
	if len(r.batch) == resultBatch {
		if e := r.failed.Load(); e != nil {
			r.err = *e
			return
		}
		r.work <- r.batch
		r.batch = nil
	}
}

// run is the writing goroutine.
func (r *ResultWriter) run() {
	defer close(r.done)
	for b := range r.work {
		if b == nil {
			r.synced <- struct{}{}
			continue
		}
		for i := range b {
			if r.werr == nil {
				r.write(&b[i])
			}
		}
		if r.werr != nil && r.failed.Load() == nil {
			r.failed.Store(&r.werr)
		}
		select {
		case r.spare <- b[:0]:
		default:
		}
	}
}

func (r *ResultWriter) write(v *tracev2.SimResult) {
	if r.format == tracev2.SimResultJSONL {
		r.buf = append(v.AppendJSON(r.buf[:0]), '\n')
	} else {
		// An element of json.MarshalIndent(array, "", "  ") is the element
		// indented with prefix "  ".
		sep := ",\n  "
		if r.written == 0 {
			sep = "[\n  "
		}
		r.buf = v.AppendJSONIndent(append(r.buf[:0], sep...), "  ", "  ")
	}
	r.put(r.buf)
	r.written++
}

func (r *ResultWriter) put(b []byte) {
	if r.werr != nil {
		return
	}
	if _, err := r.w.Write(b); err != nil {
		r.werr = fmt.Errorf("write sim results: %w", err)
	}
}
