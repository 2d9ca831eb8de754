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
		Name:        "sweep",
		Usage:       "simulate a grid of deployments and loads, or search each deployment's max rate, and answer capacity questions",
		ArgsUsage:   " ",
		Description: replay.WorkloadSweepHelp,
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
