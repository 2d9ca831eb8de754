package main

import (
	"context"
	"log/slog"
	"os"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/outfile"
	"servesim/internal/replay"
	"servesim/internal/report"
	"servesim/internal/sweep"
)

func sweepCommand() cli.Command {
	flags := append(cli.SpecFlags(sweep.Flags()), cli.ShardFlag())
	flags = append(flags, traceFlags()...)
	flags = append(flags, cli.SpecFlags(replay.ClientFlags(true))...)
	flags = append(flags, cli.SpecFlags(replay.TraceDeploymentFlags())...)
	flags = append(flags, cli.SpecFlags(append(deploy.Flags(), deploy.ListFlags()...))...)
	return cli.Command{
		Name:        "sweep",
		Usage:       "replay a trace on a grid of deployments, or find each deployment's max rate for it, and answer capacity questions",
		ArgsUsage:   "[TRACE|-]",
		Description: replay.TraceSweepHelp,
		Flags:       flags,
		Action:      sweepAction,
		Subcommands: []cli.Command{sweepMergeCommand()},
	}
}

func sweepAction(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	in := traceInput(c, stdio)
	opts, err := sweep.Prepare(cli.SpecValues(c, sweep.Flags()), replay.RateKey, append(in.Files(), outfile.Named{What: "--deployment", Path: c.String("deployment")})...)
	if err != nil {
		return err
	}
	shard, err := cli.ParseShard(c.String("shard"), os.Getenv)
	if err != nil {
		return err
	}
	return replay.ExecuteSweep(ctx, replay.SweepCommand{Input: in, Trace: traceSettings(c),
		CheckDeployment: func() error { _, err := deploy.FromFlags(cli.SpecValues(c, deploy.Flags())); return err }, Resolver: resolver{c},
		Sweep: opts, Shard: shard, Pages: report.SweepPages{}, Stdout: stdio.Out, Log: log, Progress: cli.StepsProgress(stdio.Err, c.Bool("quiet"), "sweeping", "runs")})
}

// sweepMergeCommand is `replay sweep merge`.
func sweepMergeCommand() cli.Command { return cli.SpecCommand(sweep.MergeCommand(report.SweepPages{})) }
