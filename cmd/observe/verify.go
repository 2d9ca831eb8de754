package main

import (
	"context"
	"log/slog"
	"slices"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/flagspec"
	"servesim/internal/verify"
	"servesim/internal/workload"
)

// verifyRunFlags are the flags of observe that a verification's probes use.
var verifyRunFlags = []string{"server-url", "model", "api-key", "insecure", "header", "request-timeout", "chat",
	"max-concurrency", "trace-output", "no-self-test", "seed"}

// verifyCommand is `observe verify PLAN`.
func verifyCommand() cli.Command {
	var flags []ucli.Flag
	for _, f := range runFlags() {
		if slices.Contains(verifyRunFlags, f.Names()[0]) {
			flags = append(flags, f)
		} else {
			flags = append(flags, cli.Hidden(f)) // defined, at its default, for the probes
		}
	}
	flags = append(flags,
		&ucli.IntFlag{Name: "probes", Value: 3, Usage: "rates probed around the plan's max rate: 2 or 3"},
		&ucli.Float64Flag{Name: "spread", Value: 0.3, Usage: "probes at (1 − s)×, 1× and (1 + s)× the plan's max rate (2 probes: 1 ∓ s/2)"},
		&ucli.Int64Flag{Name: "probe-requests", Value: 100, Usage: "requests of each probe"},
		&ucli.IntFlag{Name: "max-iterations", Value: 10, Usage: "replays of the fit (calibrate fit's)"},
		&ucli.StringFlag{Name: "format", Value: "text", Usage: "the page: text, json, markdown or html (on stdout)"})
	flags = append(flags, cli.SpecFlags(workload.Flags())...)
	flags = append(flags, cli.SpecFlags(verifyDeployFlags())...)
	return cli.Command{
		Name:        "observe verify",
		Usage:       "check a simulated capacity plan (run sweep --find max-rate) on the live server with a few probes",
		ArgsUsage:   "PLAN",
		Description: verify.Help,
		Flags:       flags,
		Action:      verifyAction,
	}
}

// verifyDeployFlags are the deployment flags, less those observe's own
// flags name otherwise (--model is the served name here).
func verifyDeployFlags() []flagspec.Flag {
	var out []flagspec.Flag
	for _, f := range deploy.Flags() {
		if !slices.Contains(verifyRunFlags, f.Name) {
			out = append(out, f)
		}
	}
	return out
}

func verifyAction(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	args, err := cli.Positional(c, 1)
	if err != nil {
		return err
	}
	lc, err := config(c)
	if err != nil {
		return err
	}
	if len(args) != 1 {
		return exitcode.Usagef("give PLAN: the JSON of run sweep --find max-rate --format json")
	}
	plan := args[0]
	prefix := c.String("trace-output")
	if prefix == "-" {
		prefix = "verify"
	}
	return verify.Run(ctx, verify.Config{Plan: plan, Live: lc, Workload: cli.SpecValues(c, append(workload.Flags(), cli.SeedSpec())),
		Deploy: cli.SpecValues(c, verifyDeployFlags()), Probes: c.Int("probes"), Spread: c.Float64("spread"),
		Requests: c.Int64("probe-requests"), Prefix: prefix, Format: c.String("format"), MaxIterations: c.Int("max-iterations")},
		liveIO(ctx, c, stdio, log))
}
