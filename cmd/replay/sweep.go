package main

import (
	"context"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/cli/sweepcmd"
	"servesim/internal/replay"
	"servesim/internal/sweep"
)

// probeRate is the rate at which a max-rate search measures a
// deployment's capacity: the trace sped up until it all arrives at once.
const probeRate = 1e6

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
	ts, err := replay.OpenSweep(replay.SweepCommand{Input: traceInput(c, stdio), Trace: traceSettings(c),
		CheckDeployment: func() error { _, err := cli.Deployment(c); return err }, Resolver: resolver{c}, Log: log,
		Grid: grid, SLO: spec.SLO, Searching: spec.Find == sweep.FindMaxRate})
	if err != nil {
		return err
	}
	defer ts.Close()
	defer func() { err = ts.Named(err) }()
	if dir := c.String("summaries"); dir != "" {
		if ts.Sweeper.Summary, err = sweepcmd.Summaries(dir, stdio); err != nil {
			return err
		}
	}
	return sweepcmd.Execute(ctx, c, stdio, ts.Log, sweepcmd.Job{Command: "replay sweep", Spec: spec, Grid: grid, Shard: shard,
		Run: ts.Sweeper.Run, ProbeRate: probeRate, LoadKeys: ts.Sweeper.LoadKeys(), Base: ts.Base, Inputs: ts.Inputs})
}
