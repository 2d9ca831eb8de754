package main

import (
	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/des/metrics"
	"servesim/internal/replay"
	"servesim/internal/replay/timeline"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
)

// outputs are everything replay writes besides the text summary. Files
// become visible under their names only at commit, after a successful
// simulation; a failure leaves none that looks complete.
type outputs struct {
	set      *settings
	stdio    cli.IO
	sim      *cli.SimOutputs
	resOut   *cli.Output
	results  *replay.ResultWriter // SimResults, written in request_id order as they settle
	tlOut    *cli.Output
	timeline *timeline.Recorder
	decOut   *cli.Output // --decisions-out
}

func openOutputs(c *ucli.Context, stdio cli.IO, set *settings, in *input.Trace, tr *replay.Trace) (*outputs, error) {
	o := &outputs{set: set, stdio: stdio}
	dec, err := cli.OpenDecisions(c)
	if err != nil {
		return nil, err
	}
	o.decOut = dec
	sim, err := cli.OpenSimOutputs(c, stdio, set.header, replayedColumns(in.Columns))
	if err != nil {
		o.abort()
		return nil, err
	}
	sim.TraceRequestID = func(id int64) int64 { return int64(tr.Ordinal(id)) }
	o.sim = sim
	if set.resultsPath != "" {
		f, err := cli.CreateOutput(set.resultsPath, stdio.Out)
		if err != nil {
			o.abort()
			return nil, err
		}
		format := tracev2.SimResultArray
		if set.format == "jsonl" {
			format = tracev2.SimResultJSONL
		}
		o.resOut, o.results = f, replay.NewResultWriter(f, format, tr.RequestIDs)
		// Later rounds of a cancelled session are never injected.
		tr.OnDrop(func(id int64) { o.results.Settle(id, nil) })
	}
	if set.timeline != "" {
		f, err := cli.CreateOutput(set.timeline, stdio.Out)
		if err != nil {
			o.abort()
			return nil, err
		}
		o.tlOut, o.timeline = f, timeline.New(f)
	}
	return o, nil
}

// write is the simulation's sink.
func (o *outputs) write(rec *tracev2.Record, res *tracev2.SimResult) error {
	if o.results != nil {
		if err := o.results.Settle(rec.RequestID, res); err != nil {
			return err
		}
	}
	return o.sim.Write(rec, res)
}

// commit finishes the SimResults, writes the summary file and makes every
// file visible.
func (o *outputs) commit(sum *metrics.Summary) error {
	if o.results != nil {
		if err := o.results.Close(); err != nil {
			return err
		}
		err := o.resOut.Commit()
		o.resOut = nil
		if err != nil {
			return err
		}
	}
	if o.set.metricsOut != "" {
		f, err := cli.CreateOutput(o.set.metricsOut, o.stdio.Out)
		if err != nil {
			return err
		}
		if err := replay.WriteSummarySetup(f, sum, o.set.setup); err != nil {
			f.Abort()
			return err
		}
		if err := f.Commit(); err != nil {
			return err
		}
	}
	if o.tlOut != nil {
		err := o.tlOut.Commit()
		o.tlOut = nil
		if err != nil {
			return err
		}
	}
	if o.decOut != nil {
		err := o.decOut.Commit()
		o.decOut = nil
		if err != nil {
			return err
		}
	}
	return o.sim.Commit(nil)
}

func (o *outputs) abort() {
	if o.results != nil {
		o.results.Stop()
	}
	if o.sim != nil {
		o.sim.Abort()
	}
	if o.resOut != nil {
		o.resOut.Abort()
		o.resOut = nil
	}
	if o.tlOut != nil {
		o.tlOut.Abort()
		o.tlOut = nil
	}
	if o.decOut != nil {
		o.decOut.Abort()
		o.decOut = nil
	}
}
