package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"servesim/internal/des/metrics"
	"servesim/internal/exitcode"
	"servesim/internal/outfile"
	"servesim/internal/tracev2"
)

// SimOutputs are the optional per-request files of a simulation:
// --requests-out (one JSON line per request) and --trace-output (the
// simulated trace). Write is the simulation's sink.
type SimOutputs struct {
	// TraceRequestID, if set, maps a request_id to the one its trace row
	// carries (replay numbers its rows by the replayed list).
	TraceRequestID func(id int64) int64

	trace *tracev2.TraceWriter
	reqs  *outfile.Output
	reqw  *bufio.Writer
	enc   *json.Encoder
}

// requestLine is one line of --requests-out: the SimResult fields plus the
// request's fate, for every request (not only completed ones).
type requestLine struct {
	Status       string `json:"status"`
	ErrorMessage string `json:"error_message,omitempty"`
	tracev2.SimResult
}

// SimOutputPaths are the per-request outputs a simulation is asked for.
type SimOutputPaths struct {
	RequestsOut string // --requests-out: one JSON line per request
	// TraceOutput is the simulated trace: a prefix for the two-file form,
	// or "-" for one stream on stdout.
	TraceOutput string
	// BLISHeader writes a two-file header BLIS's strict loader accepts,
	// x_ext going to PREFIX.ext.yaml beside it.
	BLISHeader bool
}

// files are the files p writes, for outfile.Check.
func (p SimOutputPaths) files() ([]outfile.Named, error) {
	outs, err := tracev2.OutputFiles("--trace-output", p.TraceOutput)
	return append(outs, outfile.Named{What: "--requests-out", Path: p.RequestsOut}), err
}

// OpenSimOutputs creates the outputs p asks for; "-" is stdout. h and cols
// describe the trace output. Nothing is visible under its final name
// before Commit, except a two-file trace, whose rows are written as they
// come (like an interrupted observe's).
func OpenSimOutputs(p SimOutputPaths, stdout io.Writer, h *tracev2.Header, cols tracev2.Columns) (*SimOutputs, error) {
	o := &SimOutputs{}
	if p.RequestsOut != "" {
		out, err := outfile.Open(p.RequestsOut, stdout)
		if err != nil {
			return nil, err
		}
		o.reqs, o.reqw = out, bufio.NewWriterSize(out, 64<<10)
		o.enc = json.NewEncoder(o.reqw)
	}
	if p.TraceOutput != "" {
		tw, err := createTrace(p.TraceOutput, stdout, h, cols, !p.BLISHeader)
		if err != nil {
			o.Abort()
			return nil, err
		}
		o.trace = tw
	}
	return o, nil
}

// createTrace is tracev2.Create, whose failing to create the files is a
// runtime failure, not bad input.
func createTrace(prefix string, stdout io.Writer, h *tracev2.Header, cols tracev2.Columns, withExt bool) (*tracev2.TraceWriter, error) {
	tw, err := tracev2.Create(prefix, stdout, h, cols, withExt)
	if err != nil && prefix != "-" {
		return nil, exitcode.WithCode(exitcode.Failure, err) // a runtime failure whatever its cause says
	}
	return tw, err
}

// Writes reports whether an output takes the requests: without one, Write
// does nothing and a simulation need not make its rows.
func (o *SimOutputs) Writes() bool { return o.trace != nil || o.enc != nil }

// Write takes one request: its simulated trace row and, if it completed,
// its SimResult (else nil).
func (o *SimOutputs) Write(rec *tracev2.Record, res *tracev2.SimResult) error {
	if o.trace != nil {
		row := rec
		if o.TraceRequestID != nil {
			cp := *rec
			cp.RequestID = o.TraceRequestID(rec.RequestID)
			row = &cp
		}
		if err := o.trace.Write(row); err != nil {
			return err
		}
	}
	if o.enc != nil {
		line := requestLine{Status: rec.Status, ErrorMessage: rec.ErrorMessage}
		if res != nil {
			line.SimResult = *res
		} else {
			line.SimResult = tracev2.SimResult{RequestID: rec.RequestID, ArrivalUs: rec.ArrivalTimeUs,
				InputTokens: rec.PrefixLength + rec.InputTokens, SLOClass: rec.SLOClass, Instance: rec.Instance}
		}
		return o.enc.Encode(&line)
	}
	return nil
}

// Commit finishes every output; final is the trace header as it stands at
// the end (nil = unchanged).
func (o *SimOutputs) Commit(final *tracev2.Header) error {
	if o.trace != nil {
		err := o.trace.Close(final)
		o.trace = nil
		if err != nil {
			return err
		}
	}
	if o.reqs != nil {
		if err := o.reqw.Flush(); err != nil {
			return err
		}
		err := o.reqs.Commit()
		o.reqs = nil
		return err
	}
	return nil
}

// Interrupt finishes the outputs of a simulation that a signal stopped, as
// observe finishes an interrupted trace: the trace keeps its rows and gets
// x_ext.interrupted: true (in its header, or in the x_ext sidecar of a
// BLIS-compatible header) on top of h, the header it was opened with; the
// per-request file, which would look complete, is removed.
func (o *SimOutputs) Interrupt(h *tracev2.Header) error {
	var err error
	if o.trace != nil {
		final := h.Clone()
		if final.XExt == nil {
			final.XExt = &tracev2.Ext{}
		}
		yes := true
		final.XExt.Interrupted = &yes
		err = o.trace.Close(final)
		o.trace = nil
	}
	o.Abort()
	return err
}

// Interrupted is the end of a simulation a signal stopped: the text
// summary of the requests it had injected goes to stderr — stdout, which
// carries data, gets nothing that would look complete — and the returned
// error, wrapping err (the context's), makes the exit code 130.
func Interrupted(stderr io.Writer, sum *metrics.Summary, err error) error {
	injected, completed := sum.InjectedRequests, sum.CompletedRequests
	if injected == 0 {
		fmt.Fprintf(stderr, "interrupted before the first request was injected:\n%s", TextSummary(sum))
	} else {
		fmt.Fprintf(stderr, "interrupted: the %d requests injected before it ran to their end; what was simulated:\n%s", injected, TextSummary(sum))
	}
	return fmt.Errorf("interrupted after %d requests injected (%d completed); of the outputs only a trace is kept, marked interrupted: %w",
		injected, completed, err)
}

// Abort leaves no file that looks complete after a failure. A two-file
// trace keeps the rows written so far, like an interrupted observe. It is
// safe after Commit.
func (o *SimOutputs) Abort() {
	if o.trace != nil {
		o.trace.Close(nil)
		o.trace = nil
	}
	if o.reqs != nil {
		o.reqs.Abort()
		o.reqs = nil
	}
}

// InterruptedHelp says in run's and replay's --help what Ctrl+C leaves
// (Interrupted writes the summary; SimOutputs.Interrupt marks the trace).
const InterruptedHelp = `Ctrl+C stops injecting: the requests in flight run to their end, the summary of
what was simulated goes to stderr, a --trace-output is kept and marked
interrupted (x_ext.interrupted: in the header, or in the .ext.yaml beside it with
--blis-compatible-header), the other outputs are not written, and the exit code
is 130.
`
