package main

import (
	"bufio"
	"encoding/json"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// outputs are run's optional per-request files.
type outputs struct {
	stdio cli.IO
	trace *tracev2.TraceWriter
	hdr   *tracev2.Header
	reqs  *cli.Output
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

func (o *outputs) open(c *ucli.Context, h *tracev2.Header, cols tracev2.Columns) error {
	if p := c.String("requests-out"); p != "" {
		out, err := cli.CreateOutput(p, o.stdio.Out)
		if err != nil {
			return err
		}
		o.reqs, o.reqw = out, bufio.NewWriterSize(out, 64<<10)
		o.enc = json.NewEncoder(o.reqw)
	}
	if p := c.String("trace-output"); p != "" {
		tw, err := cli.CreateTrace(p, o.stdio, h, cols, c.Bool("trace-ext"))
		if err != nil {
			return err
		}
		o.trace, o.hdr = tw, h
	}
	return nil
}

func (o *outputs) sink() replay.Sink {
	return func(rec *tracev2.Record, res *tracev2.SimResult) error {
		if o.trace != nil {
			if err := o.trace.Write(rec); err != nil {
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
}

func (o *outputs) commit() error {
	if o.trace != nil {
		err := o.trace.Close(nil)
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

// abort leaves no file that looks complete after a failure. A two-file
// trace keeps the rows written so far, like an interrupted observe.
func (o *outputs) abort() {
	if o.trace != nil {
		o.trace.Close(nil)
	}
	if o.reqs != nil {
		o.reqs.Abort()
	}
}
