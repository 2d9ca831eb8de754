package main

import (
	"context"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/abtest"
	"servesim/internal/calibrate"
	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/sweep"
)

// compareCommand is `calibrate compare A B`: two real runs judged against
// each other.
func compareCommand() cli.Command {
	def := abtest.DefaultOptions()
	flags := []ucli.Flag{
		cli.OutputFlag("the comparison (- = stdout)"),
		cli.FormatFlag("text", "text, json, markdown or html", abtest.Formats()...),
		&ucli.IntFlag{Name: "resamples", Value: def.Resamples, Category: flagspec.CatGrading, Usage: "bootstrap resamples (100 to 100000); the time grows with resamples × requests (20,000 requests: about 3 s at 2000)"},
		&ucli.Float64Flag{Name: "confidence", Value: def.Confidence, Category: flagspec.CatGrading, Usage: "confidence of the intervals, a fraction"},
		&ucli.Uint64Flag{Name: "seed", Value: def.Seed, Category: flagspec.CatGrading, Usage: "seed of the bootstrap's resampling"},
		&ucli.StringFlag{Name: "slo", Category: flagspec.CatGrading, Usage: "goodput counts the requests within every bound, e.g. 'ttft.p99<500ms,tpot.mean<50ms' (the sweep's SLO language)"},
		&ucli.StringFlag{Name: "assert", Category: flagspec.CatGates, Usage: "gate, e.g. 'ttft.p99:regress' (grammar below); exit 3 when one fails"},
	}
	return cli.Command{
		Name:        "calibrate compare",
		Usage:       "A/B of two real runs: differences with bootstrap intervals, judged against the noise",
		ArgsUsage:   "A B (each TRACE, or TRACE1,TRACE2,... for repeats)",
		Description: calibrate.CompareHelp,
		Flags:       flags,
		Action:      compareAction,
	}
}

// compareAction parses the flags into a calibrate.Comparison and runs it.
func compareAction(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	args, err := cli.Positional(c, 2)
	if err != nil {
		return err
	}
	if len(args) != 2 {
		return exitcode.Usagef("give two runs: A B (each a trace, or the repeats of one comma-separated)")
	}
	slo, err := sweep.ParseSLO(c.String("slo"))
	if err != nil {
		return exitcode.AsUsage(err)
	}
	gates, err := abtest.ParseGates(c.String("assert"))
	if err != nil {
		return err
	}
	o := abtest.DefaultOptions()
	o.Resamples, o.Confidence, o.Seed, o.SLO, o.SameModel = c.Int("resamples"), c.Float64("confidence"), c.Uint64("seed"), slo, deploy.SameModel
	return calibrate.RunCompare(ctx, calibrate.Comparison{
		A: args[0], B: args[1], Options: o, Gates: gates,
		Format: c.String("format"), Output: c.String("output"),
		Stdin: stdio.In, Stdout: stdio.Out, Log: log,
	})
}
