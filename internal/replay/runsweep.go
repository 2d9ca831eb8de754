package replay

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"

	"servesim/internal/deploy"
	"servesim/internal/sweep"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// WorkloadSweep is `run sweep`: the workload of run on every case of a
// grid of the base deployment, swept as the sweep flags say.
type WorkloadSweep struct {
	Sweep sweep.Options
	Shard sweep.Shard
	Pages sweep.Pages // renders the table and the page (report.SweepPages)
	// Workload is the base workload; a spec file's bytes are read once
	// into SpecData, as every case resolves the workload again.
	Workload workload.Options
	Client   Client // the load generator (run --client-max-concurrency)
	Deploy   deploy.Config
	// WorkloadFacts describes a workload's client as run's summary
	// records it.
	WorkloadFacts func(*workload.Workload) tracev2.Client
	Stdout        io.Writer
	Log           *slog.Logger
	Progress      func(total int) (tick func(done, total int), finish func()) // see sweep.Job
}

// RunSweep is the run sweep: check every case, run this shard's on the
// simulator, and write the table, the page and the answer.
func RunSweep(ctx context.Context, ws WorkloadSweep) error {
	opts := ws.Workload
	sw := &Sweeper{Deploy: ws.Deploy, Grid: ws.Sweep.Grid, SLO: ws.Sweep.Spec.SLO, Workload: &opts,
		Searching: ws.Sweep.Spec.Find == sweep.FindMaxRate, Client: ws.Client, WorkloadFacts: ws.WorkloadFacts}
	if err := sw.Check(); err != nil {
		return err
	}
	if dir := ws.Sweep.Summaries; dir != "" {
		var err error
		if sw.Summary, err = sweep.Summaries(dir); err != nil {
			return err
		}
	}
	return sweep.Execute(ctx, sweep.Job{Command: "run sweep", Options: ws.Sweep, Shard: ws.Shard, Run: sw.Run, Vary: sw.Vary,
		ProbeRate: ProbeRate, LoadKeys: sw.LoadKeys(), Base: sw.WorkloadBase(&opts), Inputs: []any{ws.Deploy, opts, ws.Client},
		Pages: ws.Pages, Stdout: ws.Stdout, Log: ws.Log, Progress: ws.Progress})
}

// WorkloadBase describes what every case of a workload sweep (run sweep)
// shares: the workload o and the deployment keys not swept.
func (sw *Sweeper) WorkloadBase(o *workload.Options) []sweep.Param {
	var ps []sweep.Param
	add := func(k, v string) {
		if sw.Grid.Axis(k) == nil && v != "" {
			ps = append(ps, sweep.Param{Key: k, Value: v})
		}
	}
	switch {
	case o.SpecPath != "":
		add("workload", filepath.Base(o.SpecPath))
	case o.Preset != "":
		add("workload", o.Preset)
	default:
		add("workload", "flags")
	}
	if o.Rate != nil {
		add("rate", strconv.FormatFloat(*o.Rate, 'g', -1, 64))
	}
	if o.NumRequests != nil {
		add("num_requests", strconv.FormatInt(*o.NumRequests, 10))
	}
	switch {
	case o.Seed != nil:
		add("seed", strconv.FormatInt(*o.Seed, 10))
	case o.SpecPath == "":
		add("seed", strconv.FormatInt(workload.DefaultSeed, 10))
	}
	return append(ps, sw.Base()...)
}
