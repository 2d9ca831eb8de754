package replay

import (
	"servesim/internal/des/metrics"
	"servesim/internal/outfile"
	"servesim/internal/tracev2"
)

// outputs are everything a replay writes besides the text summary. Files
// become visible under their names only at commit, after a successful
// simulation; a failure leaves none that looks complete.
type outputs struct {
	j        *job
	sim      *SimOutputs
	resOut   *outfile.Output
	results  *ResultWriter // SimResults, written in request_id order as they settle
	tlOut    *outfile.Output
	timeline Observer
	decOut   *outfile.Output // the routing-decision log
}

func (j *job) openOutputs(tr *Trace) (*outputs, error) {
	o := &outputs{j: j}
	if j.cmd.OpenDecisions != nil {
		dec, err := j.cmd.OpenDecisions()
		if err != nil {
			return nil, err
		}
		o.decOut = dec
	}
	sim, err := OpenSimOutputs(j.cmd.Sim, j.stdout, j.header, replayedColumns(j.in.Columns))
	if err != nil {
		o.abort()
		return nil, err
	}
	sim.TraceRequestID = func(id int64) int64 { return int64(tr.Ordinal(id)) }
	o.sim = sim
	if j.resultsPath != "" {
		f, err := outfile.Open(j.resultsPath, j.stdout)
		if err != nil {
			o.abort()
			return nil, err
		}
		format := tracev2.SimResultArray
		if j.cmd.Format == "jsonl" {
			format = tracev2.SimResultJSONL
		}
		o.resOut, o.results = f, NewResultWriter(f, format, tr.RequestIDs)
		// Later rounds of a cancelled session are never injected.
		tr.OnDrop(func(id int64) { o.results.Settle(id, nil) })
	}
	if j.cmd.Timeline != "" {
		f, err := outfile.Open(j.cmd.Timeline, j.stdout)
		if err != nil {
			o.abort()
			return nil, err
		}
		o.tlOut, o.timeline = f, j.cmd.NewTimeline(f)
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
	if o.j.cmd.MetricsOut != "" {
		f, err := outfile.Open(o.j.cmd.MetricsOut, o.j.stdout)
		if err != nil {
			return err
		}
		if err := WriteSummarySetup(f, sum, o.j.setup); err != nil {
			f.Abort()
			return err
		}
		if err := f.Commit(); err != nil {
			return err
		}
	}
	if err := writeFleetHTML(o.j.cmd.FleetHTML, sum); err != nil {
		return err
	}
	for _, f := range []**outfile.Output{&o.tlOut, &o.decOut} {
		if *f != nil {
			err := (*f).Commit()
			*f = nil
			if err != nil {
				return err
			}
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
	for _, f := range []**outfile.Output{&o.resOut, &o.tlOut, &o.decOut} {
		if *f != nil {
			(*f).Abort()
			*f = nil
		}
	}
}
