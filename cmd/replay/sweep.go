package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/cli/sweepcmd"
	"servesim/internal/replay"
	"servesim/internal/sweep"
	"servesim/internal/tracev2"
)

// probeRate is the rate at which a max-rate search measures a
// deployment's capacity: the trace sped up until it all arrives at once.
const probeRate = 1e6

// maxHeldRows bounds the rows a replay sweep holds in memory (about 0.5 KB
// each) to read the trace once for every case; a longer trace is read
// again from its file for each case instead.
const maxHeldRows = 250_000

func sweepCommand() cli.Command {
	flags := sweepcmd.Flags()
	flags = append(flags, traceFlags()...)
	flags = append(flags, cli.ClientFlags(true)...)
	flags = append(flags, cli.TraceDeploymentFlags()...)
	flags = append(flags, cli.DeploymentFlags()...)
	return cli.Command{
		Name:      "sweep",
		Usage:     "replay a trace on a grid of deployments, or find each deployment's max rate for it, and answer capacity questions",
		ArgsUsage: "[TRACE|-]",
		Description: `sweep replays one trace (any form replay reads, --from imports included) on every
case of a grid: the base deployment (the trace's own, as replay takes it, under
--deployment and the flags) with some keys varied,
and, with the load key rate, the trace sped up or slowed down to that mean rate
(arrival gaps scaled, the requests unchanged). It prints one row per case (goodput,
SLO attainment, throughput, TTFT, ITL and E2E percentiles, KV use, preemptions,
steady state, GPUs and cost) as a table, CSV or JSON, and answers directly:

  --find min-cost   the cheapest deployment of the grid that serves the trace under
                    --slo, its cost per million output tokens, and the Pareto front of
                    cost against latency (min-gpus: the fewest GPUs)
  --find max-rate   the highest rate, as the trace sped up, each deployment sustains
                    under --slo (a search to --precision), with the knee of its curve

A case whose queue grows until the end reached no steady state: it is marked
unstable and none of its latencies is reported. Cases run on every core (--jobs);
--shard I/N runs one slice, and replay sweep merge joins the slices' JSON.
Exit code 3: an SLO that no case meets (the tables are written first).

Examples:

   # How many H100s serve the Azure conversation trace at p99 TTFT under 1 s, and at what cost?
   replay sweep --from azure AzureLLMInferenceTrace_conv.csv --model llama-3.1-70b-instruct \
       --grid tensor_parallel=2,4,8 --grid num_instances=1..4 \
       --slo 'ttft.p99<1s' --find min-cost --html capacity.html

   # How far can this trace grow on 4 replicas before p99 TTFT passes 500 ms?
   replay sweep chat.csv --num-instances 4 --find max-rate --slo 'ttft.p99<500ms'

   # Routing policies against each other on the same traffic:
   replay sweep chat.csv --num-instances 4 --grid routing_policy=round-robin,least-loaded,weighted

` + sweepcmd.HelpTail(),
		Flags:       flags,
		Action:      sweepAction,
		Subcommands: []cli.Command{sweepcmd.MergeCommand()},
	}
}

func sweepAction(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) (err error) {
	spec, grid, shard, err := sweepcmd.Prepare(c, replay.RateKey)
	if err != nil {
		return err
	}
	opts, horizonUs, err := traceSettings(c)
	if err != nil {
		return err
	}
	if _, err := cli.Deployment(c); err != nil {
		return err // a bad flag or --deployment file, before the trace is read
	}
	in, err := loadInput(c, stdio, log, false)
	if err != nil {
		return err
	}
	defer in.Close()
	defer func() { err = in.Named(err) }()
	log = in.Logger(log)
	// The trace's own deployment and client, under the flags, as replay
	// simulates them: the base every case varies.
	dep, client, facts, err := traceSetup(c, in, &opts, log)
	if err != nil {
		return err
	}
	rows := in.Rows
	if in.N <= maxHeldRows {
		if rows, err = holdRows(in.Rows); err != nil {
			return err
		}
	}
	cfg := simConfig(c, in, horizonUs)
	cfg.Client = client
	sw := &replay.Sweeper{Deploy: dep, Grid: grid, SLO: spec.SLO, Searching: spec.Find == sweep.FindMaxRate,
		Trace: &replay.SweepTrace{Rows: rows, Options: opts, Config: cfg, Facts: facts, BaseRate: c.Float64("rate")}}
	if err := sw.Check(); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	if dir := c.String("summaries"); dir != "" {
		if sw.Summary, err = sweepcmd.Summaries(dir, stdio); err != nil {
			return err
		}
	}
	trace := struct {
		Name              string
		Rows              int
		RateRPS, BaseRate float64
		Options           replay.TraceOptions
		Seed              int64
		Horizon           int64
		HashToks          int
		Client            replay.Client
	}{filepath.Base(in.Name), in.N, sw.Trace.RateRPS, sw.Trace.BaseRate, opts, cfg.Seed, horizonUs, cfg.HashBlockTokens, client}
	base := []sweep.Param{{Key: "trace", Value: filepath.Base(in.Name)}, {Key: "requests", Value: strconv.Itoa(in.N)},
		{Key: "trace_rate_rps", Value: strconv.FormatFloat(sw.Trace.RateRPS, 'f', 3, 64)}}
	if c.IsSet("rate") && grid.Axis(replay.RateKey) == nil {
		base = append(base, sweep.Param{Key: "rate", Value: strconv.FormatFloat(c.Float64("rate"), 'g', -1, 64)})
	}
	return sweepcmd.Execute(ctx, c, stdio, log, sweepcmd.Job{Command: "replay sweep", Spec: spec, Grid: grid, Shard: shard,
		Run: sw.Run, ProbeRate: probeRate, LoadKeys: sw.LoadKeys(), Base: append(base, sw.Base()...), Inputs: []any{dep, trace}})
}

// holdRows reads a trace's rows into memory once, so that the cases do
// not parse it again.
func holdRows(rows replay.Rows) (replay.RecordRows, error) {
	rd, err := rows.Open()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var out replay.RecordRows
	for {
		var rec tracev2.Record
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
}
