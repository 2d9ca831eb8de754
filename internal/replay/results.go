package replay

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"servesim/internal/tracev2"
)

// ResultWriter writes SimResults sorted by request_id (tracev2.md §9) while
// they arrive in completion order: a result is written as soon as every
// smaller request id is settled, so only the results that overtook a
// slower request are held. The bytes are those of tracev2.WriteSimResults
// for the same results.
type ResultWriter struct {
	w       *bufio.Writer
	format  tracev2.SimResultFormat
	ids     []int64 // every request id that may settle, ascending
	next    int
	pending map[int64]*tracev2.SimResult // settled, not yet written; nil = no result
	written int
	buf     []byte
	err     error
}

// NewResultWriter writes to w the results of the requests ids (ascending;
// Trace.RequestIDs).
func NewResultWriter(w io.Writer, format tracev2.SimResultFormat, ids []int64) *ResultWriter {
	return &ResultWriter{w: bufio.NewWriterSize(w, 64<<10), format: format, ids: ids, pending: map[int64]*tracev2.SimResult{}}
}

// Settle records the outcome of request id: its SimResult, or nil when it
// did not complete (or will never be injected).
func (r *ResultWriter) Settle(id int64, res *tracev2.SimResult) error {
	if r.err != nil {
		return r.err
	}
	if r.next < len(r.ids) && r.ids[r.next] == id {
		// Its turn: most results of a trace replayed at its own pace.
		r.next++
		if res != nil {
			r.write(res)
		}
	} else {
		var keep *tracev2.SimResult
		if res != nil {
			cp := *res
			keep = &cp
		}
		r.pending[id] = keep
	}
	for r.next < len(r.ids) && r.err == nil && len(r.pending) > 0 {
		v, ok := r.pending[r.ids[r.next]]
		if !ok {
			break
		}
		delete(r.pending, r.ids[r.next])
		r.next++
		if v != nil {
			r.write(v)
		}
	}
	return r.err
}

// Close writes the results still held, in request_id order (requests never
// settled have none), ends the array and flushes.
func (r *ResultWriter) Close() error {
	for ; r.next < len(r.ids) && r.err == nil; r.next++ {
		if v := r.pending[r.ids[r.next]]; v != nil {
			r.write(v)
		}
	}
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
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = fmt.Errorf("write sim results: %w", err)
	}
	return r.err
}

func (r *ResultWriter) write(v *tracev2.SimResult) {
	for _, x := range []float64{v.TTFTUs, v.E2EUs, v.ITLMeanUs, v.SchedulingDelayUs} {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			r.err = fmt.Errorf("write sim results: request %d: time %v is not finite", v.RequestID, x)
			return
		}
	}
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
	if r.err != nil {
		return
	}
	if _, err := r.w.Write(b); err != nil {
		r.err = fmt.Errorf("write sim results: %w", err)
	}
}
