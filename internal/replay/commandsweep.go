package replay

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"

	"servesim/internal/deploy"
	"servesim/internal/sweep"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
)

// maxHeldRows bounds the rows a replay sweep holds in memory (about 0.5 KB
// each) to read the trace once for every case; a longer trace is read
// again from its file for each case instead.
const maxHeldRows = 250_000

// ProbeRate is the rate at which a max-rate search measures a
// deployment's capacity: every request arrives at once (a trace sped up
// until it all does).
const ProbeRate = 1e6

// SweepCommand is `replay sweep`: one trace, read as a replay reads it, on
// the deployment and the client a replay would take as the base every
// case varies, swept as the sweep flags say.
type SweepCommand struct {
	Input           input.Config // the trace; it is never streamed
	Trace           TraceFlags
	CheckDeployment func() error // as Command's
	Resolver        Resolver
	Sweep           sweep.Options
	Shard           sweep.Shard
	Pages           sweep.Pages // renders the table and the page (report.SweepPages)
	Stdout          io.Writer
	Log             *slog.Logger
	Progress        func(total int) (tick func(done, total int), finish func()) // see sweep.Job
}

// ExecuteSweep is the replay sweep: read the trace and set up the base,
// run every case of this shard on the simulator, and write the table, the
// page and the answer. Errors name the paths of the pipes the trace came
// through.
func ExecuteSweep(ctx context.Context, cmd SweepCommand) (err error) {
	ts, err := openSweep(cmd)
	if err != nil {
		return err
	}
	defer ts.Close()
	defer func() { err = ts.Named(err) }()
	if dir := cmd.Sweep.Summaries; dir != "" {
		if ts.Sweeper.Summary, err = sweep.Summaries(dir); err != nil {
			return err
		}
	}
	return sweep.Execute(ctx, sweep.Job{Command: "replay sweep", Options: cmd.Sweep, Shard: cmd.Shard, Run: ts.Sweeper.Run, Vary: ts.Sweeper.Vary,
		ProbeRate: ProbeRate, LoadKeys: ts.Sweeper.LoadKeys(), Base: ts.Base, Inputs: ts.Inputs,
		Pages: cmd.Pages, Stdout: cmd.Stdout, Log: ts.Log, Progress: cmd.Progress})
}

// traceSweep is a replay sweep ready to run: its Sweeper, the parameters
// every case shares (Base) and what its fingerprint covers (Inputs).
type traceSweep struct {
	Sweeper *Sweeper
	Base    []sweep.Param
	Inputs  []any
	// Log names the paths given for the pipes the trace came through.
	Log *slog.Logger
	in  *input.Trace
}

// openSweep validates the sweep's settings, reads the trace and sets up
// the base of the sweep. The caller closes the traceSweep.
func openSweep(cmd SweepCommand) (ts *traceSweep, err error) {
	opts, horizonUs, err := cmd.Trace.options()
	if err != nil {
		return nil, err
	}
	if err := cmd.CheckDeployment(); err != nil {
		return nil, err // a bad flag or --deployment file, before the trace is read
	}
	cfg := cmd.Input
	cfg.Stream, cfg.Log = false, cmd.Log
	if !cmd.Trace.IgnoreTraceDeployment {
		cfg.DeploymentKey = deploy.CheckTraceKey // a bad value refused at its place in the header
	}
	in, err := input.Open(cfg)
	if err != nil {
		return nil, err
	}
	ts = &traceSweep{in: in, Log: in.Logger(cmd.Log)}
	defer func() {
		if err != nil {
			err = in.Named(err)
			in.Close()
		}
	}()
	// The trace's own deployment and client, under what the user gave, as
	// a replay simulates them: the base every case varies.
	dep, client, facts, err := TraceSetup(cmd.Resolver, &cmd.Trace, in, &opts, ts.Log)
	if err != nil {
		return nil, err
	}
	rows := in.Rows
	if in.N <= maxHeldRows {
		if rows, err = holdRows(in.Rows); err != nil {
			return nil, err
		}
	}
	rc := traceConfig(&cmd.Trace, in, horizonUs)
	rc.Client = client
	grid := cmd.Sweep.Grid
	sw := &Sweeper{Deploy: dep, Grid: grid, SLO: cmd.Sweep.Spec.SLO, Searching: cmd.Sweep.Spec.Find == sweep.FindMaxRate,
		Trace: &SweepTrace{Rows: rows, Options: opts, Config: rc, Facts: facts, BaseRate: cmd.Trace.Rate}}
	if err := sw.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	ts.Sweeper = sw
	trace := struct {
		Name              string
		Rows              int
		RateRPS, BaseRate float64
		Options           TraceOptions
		Seed              int64
		Horizon           int64
		HashToks          int
		Client            Client
	}{filepath.Base(in.Name), in.N, sw.Trace.RateRPS, sw.Trace.BaseRate, opts, rc.Seed, horizonUs, rc.HashBlockTokens, client}
	ts.Inputs = []any{dep, trace}
	base := []sweep.Param{{Key: "trace", Value: filepath.Base(in.Name)}, {Key: "requests", Value: strconv.Itoa(in.N)},
		{Key: "trace_rate_rps", Value: strconv.FormatFloat(sw.Trace.RateRPS, 'f', 3, 64)}}
	if cmd.Trace.RateSet && grid.Axis(RateKey) == nil {
		base = append(base, sweep.Param{Key: "rate", Value: strconv.FormatFloat(cmd.Trace.Rate, 'g', -1, 64)})
	}
	ts.Base = append(base, sw.Base()...)
	return ts, nil
}

// Named gives err the paths given for the pipes the trace came through.
func (ts *traceSweep) Named(err error) error { return ts.in.Named(err) }

// Close removes the trace's temporary files.
func (ts *traceSweep) Close() { ts.in.Close() }

// holdRows reads a trace's rows into memory once, so that the cases do
// not parse it again.
func holdRows(rows Rows) (RecordRows, error) {
	var out RecordRows
	err := input.Each(rows, func(rec *tracev2.Record) error {
		r := *rec
		r.HashIDs = slices.Clone(rec.HashIDs) // the reader reuses its record
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
