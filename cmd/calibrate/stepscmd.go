package main

import (
	"context"
	"log/slog"
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/calibrate"
	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/flagspec"
	"servesim/internal/replay"
)

// stepsDeploymentFlags are the flags that decide the deployment whose
// latency model predicts the steps.
func stepsDeploymentFlags() []flagspec.Flag {
	return append(deploy.Flags(), replay.TraceDeploymentFlags()...)
}

// stepsCommand is `calibrate steps`: the real engine steps of a trace with
// chunk times, beside the latency model's.
func stepsCommand() cli.Command {
	flags := []ucli.Flag{
		&ucli.StringFlag{Name: "trace-header", Usage: "trace header YAML of a two-file trace (with --trace-data)"},
		&ucli.StringFlag{Name: "trace-data", Usage: "trace data CSV of a two-file trace (with --trace-header)"},
		&ucli.StringFlag{Name: "itl-data", Usage: "ITL CSV (request_id,chunk_index,timestamp_us)", DefaultText: "NAME.itl.csv beside the trace, if it exists"},
		cli.OutputFlag("the step table (- = stdout)"),
		cli.FormatFlag("text", "text, json or markdown"),
		&ucli.StringFlag{Name: "fit-out", Category: flagspec.CatOutput, Usage: "also fit the physics model's shares of peak FLOP/s and bandwidth and its eager per-layer cost to the steps, and write the fitted deployment YAML here"},
		&ucli.DurationFlag{Name: "step-window", Value: 500 * time.Microsecond, Usage: "chunks at most this far apart end the same step (well under the shortest step, well over the spread of one step's chunks)"},
	}
	flags = cli.Categorised(map[string][]string{flagspec.CatTrace: {"trace-header", "trace-data", "itl-data"}}, flags)
	flags = append(flags, cli.SpecFlags(append(stepsDeploymentFlags(), deploy.ListFlags()...))...)
	return cli.Command{
		Name:        "calibrate steps",
		Usage:       "the real engine steps of a trace, read from its chunk times, beside the latency model's step times",
		ArgsUsage:   "REAL",
		Description: calibrate.StepsHelp,
		Flags:       flags,
		Action:      stepsAction,
	}
}

// stepsAction extracts and prints the steps (calibrate.RunSteps).
func stepsAction(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	args, err := cli.Positional(c, 1)
	if err != nil {
		return err
	}
	return calibrate.RunSteps(ctx, calibrate.Steps{
		Trace: calibrate.FitArgs{Args: args, TraceHeader: c.String("trace-header"), TraceData: c.String("trace-data"),
			ITLData: c.String("itl-data"), ITLDataSet: c.IsSet("itl-data")},
		Resolver: &replay.FlagResolver{Flags: cli.SpecValues(c, stepsDeploymentFlags())},
		WindowUs: c.Duration("step-window").Microseconds(),
		Format:   c.String("format"), Output: c.String("output"), FitOut: c.String("fit-out"),
		Stdin: stdio.In, Stdout: stdio.Out, Stderr: stdio.Err, Log: log,
	})
}
