package main

import (
	"context"
	"log/slog"
	"os"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/infile"
	"servesim/internal/outfile"
	"servesim/internal/replay"
	"servesim/internal/report"
	"servesim/internal/sweep"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

func sweepCommand() cli.Command {
	flags := append(cli.SpecFlags(sweep.Flags()), cli.ShardFlag())
	flags = append(flags, cli.SeedFlag())
	flags = append(flags, cli.SpecFlags(workload.Flags())...)
	flags = append(flags, cli.SpecFlags(replay.ClientFlags(false))...)
	flags = append(flags, cli.SpecFlags(append(deploy.Flags(), deploy.ListFlags()...))...)
	return cli.Command{
		Name:      "sweep",
		Usage:     "simulate a grid of deployments and loads, or search each deployment's max rate, and answer capacity questions",
		ArgsUsage: " ",
		Description: `sweep runs the workload of run (a preset, a spec YAML, or flags) on every case of a
grid: the base deployment (flags or --deployment) with some keys varied, at some
loads. It prints one row per case (goodput, SLO attainment, throughput, TTFT, ITL and
E2E percentiles, KV use, preemptions, steady state, GPUs and cost) as a table, CSV
or JSON, the same whatever order the cases ran in, and answers directly:

  --find max-rate   the highest rate each deployment sustains under --slo (a search
                    to --precision, not a dense grid), with the knee of its latency curve
  --find min-cost   the cheapest deployment of the grid meeting --slo at each load,
                    with its cost per million output tokens and the Pareto front of
                    cost against latency (min-gpus: the fewest GPUs)
  --find min-shed   the setting of the grid meeting --slo that rejects the fewest
                    requests, e.g. --grid admission_policy=always-admit,token-bucket

A case that never reaches a steady state (its queue grows until the end) is marked
unstable and no latency of it is reported. Cases run on every core (--jobs); a sweep
too big for one machine fans out with --shard I/N (or N with the index from
$JOB_COMPLETION_INDEX or $SLURM_ARRAY_TASK_ID) and run sweep merge joins the shards.
Exit code 3: an SLO that no case meets (the tables are written first).

Examples:

   # p99 TTFT and goodput of a chatbot on 1 to 4 H100s, 10 to 80 requests/s:
   run sweep --workload chatbot --num-requests 5000 --grid num_instances=1..4 \
       --grid rate=10..80:10 --slo 'ttft.p99<500ms' --html sweep.html

   # The highest rate one H100 serves with p99 TTFT under 500 ms and p99 ITL under 50 ms:
   run sweep --workload chatbot --num-requests 10000 --find max-rate \
       --slo 'ttft.p99<500ms,itl.p99<50ms'

   # The cheapest deployment for 60 requests/s, Llama-3.1-70B on H100 or A100:
   run sweep --workload chatbot --rate 60 --model llama-3.1-70b-instruct \
       --grid gpu=H100,A100-80 --grid tensor_parallel=2,4,8 --grid num_instances=1..4 \
       --slo 'ttft.p99<1s' --find min-cost

   # Eight shards with GNU parallel, then one table:
   parallel run sweep --sweep capacity.yaml --workload chatbot --num-requests 10000 \
       --shard {}/8 --format json -o shard-{}.json ::: 0 1 2 3 4 5 6 7
   run sweep merge shard-*.json

` + sweep.HelpTail(),
		Flags:       flags,
		Action:      sweepAction,
		Subcommands: []cli.Command{sweepMergeCommand()},
	}
}

func sweepAction(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	if _, err := cli.Positional(c, 0); err != nil {
		return err
	}
	opts, err := sweep.Prepare(cli.SpecValues(c, sweep.Flags()), replay.RateKey,
		outfile.Named{What: "--deployment", Path: c.String("deployment")}, outfile.Named{What: "--workload-spec", Path: c.String("workload-spec")})
	if err != nil {
		return err
	}
	shard, err := cli.ParseShard(c.String("shard"), os.Getenv)
	if err != nil {
		return err
	}
	wl, err := workload.FromFlags(cli.SpecValues(c, append(workload.Flags(), cli.SeedSpec())), stdio.In, cli.StdinName)
	if err != nil {
		return err
	}
	if wl.SpecPath != "" && wl.SpecData == nil {
		// Read once: every case resolves the workload again.
		if wl.SpecData, err = infile.ReadFile(wl.SpecPath, infile.ConfigBytes); err != nil {
			return exitcode.Usagef("--workload-spec: %v", err)
		}
	}
	client, _, err := replay.ClientFromFlags(cli.SpecValues(c, replay.ClientFlags(true)))
	if err != nil {
		return err
	}
	dep, err := deploy.FromFlags(cli.SpecValues(c, deploy.Flags()))
	if err != nil {
		return err
	}
	return replay.RunSweep(ctx, replay.WorkloadSweep{Sweep: opts, Shard: shard, Workload: wl, Client: client, Deploy: dep,
		WorkloadFacts: func(w *workload.Workload) tracev2.Client {
			facts := w.Client()
			facts.MaxConcurrency, facts.SendGapUs = client.MaxConcurrency, client.SendGapUs
			return facts
		},
		Pages: report.SweepPages{}, Stdout: stdio.Out, Log: log, Progress: cli.StepsProgress(stdio.Err, c.Bool("quiet"), "sweeping", "runs")})
}

// sweepMergeCommand is `run sweep merge`.
func sweepMergeCommand() cli.Command { return cli.SpecCommand(sweep.MergeCommand(report.SweepPages{})) }
