package main

import (
	"context"
	"log/slog"
	"math"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/calibrate"
	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/fit"
	"servesim/internal/flagspec"
	"servesim/internal/outfile"
	"servesim/internal/replay"
)

// fitCommand is `calibrate fit`: fit the latency model's coefficients to a
// real trace and write them as a deployment YAML.
func fitCommand() cli.Command {
	flags := []ucli.Flag{
		&ucli.StringFlag{Name: "trace-header", Usage: "trace header YAML of a two-file trace (with --trace-data)"},
		&ucli.StringFlag{Name: "trace-data", Usage: "trace data CSV of a two-file trace (with --trace-header)"},
		&ucli.StringFlag{Name: "itl-data", Usage: "ITL CSV (request_id,chunk_index,timestamp_us)", DefaultText: "NAME.itl.csv beside the trace, if it exists"},
		cli.OutputFlag("the fitted deployment YAML (- = stdout)"),
		&ucli.Float64Flag{Name: "holdout", Usage: "share of the requests left out of the fit and graded apart, in [0, 1); drawn from --seed and the request ids"},
		cli.SeedFlag(),
		&ucli.Int64Flag{Name: "warmup-requests", Value: -1, Usage: "do not fit rows with request_id below N (they are still replayed); -1 = the header's warm_up_requests"},
		&ucli.Int64Flag{Name: "network-rtt-us", Value: -1, Usage: "round trip taken off the measured TTFT, µs; -1 = the header's network.measured_rtt_ms"},
		&ucli.IntFlag{Name: "max-iterations", Value: 10, Usage: "replays of the fixed-point iteration (one more checks the result)"},
		&ucli.BoolFlag{Name: "fit-token-overhead", Usage: "also fit A_tok (alpha[2]); otherwise it keeps its starting value, which the data cannot tell from the per-step constant"},
		&ucli.IntSliceFlag{Name: "hold-alpha", Usage: "keep these alpha coefficients (indices 0-2) at their starting values, e.g. 1 for blackbox's per-prompt-token queue delay"},
		&ucli.IntSliceFlag{Name: "fit-alpha", Usage: "physics model: also fit these alphas (0: Q, 1: A_end, 2: A_tok), each kept within [0, 0.1 s]; by default they keep their physical starting values (a free Q fitted on a saturated trace soaks up the server's queue)"},
		&ucli.StringFlag{Name: "session-mode", Value: "fixed", DefaultText: "the trace's client, else fixed", Usage: "as replay's: fixed (every row at its own time) or closed-loop (the errors are those of a replay whose later session rounds follow the simulated completions)"},
		&ucli.DurationFlag{Name: "think-time", Usage: "closed-loop think time when neither the row nor the trace gives one"},
	}
	flags = cli.Categorised(map[string][]string{
		flagspec.CatTrace: {"trace-header", "trace-data", "itl-data", "session-mode", "think-time"},
		flagspec.CatFit:   {"holdout", "warmup-requests", "network-rtt-us", "max-iterations", "fit-token-overhead", "hold-alpha", "fit-alpha"},
	}, flags)
	flags = append(flags, cli.SpecFlags(replay.TraceDeploymentFlags())...)
	flags = append(flags, cli.SpecFlags(replay.ClientFlags(true))...)
	flags = append(flags, cli.SpecFlags(append(deploy.Flags(), deploy.ListFlags()...))...)
	return cli.Command{
		Name:        "calibrate fit",
		Usage:       "fit the latency model's coefficients so that replaying real traces reproduces them",
		ArgsUsage:   "REAL [REAL...]",
		Description: calibrate.FitHelp,
		Flags:       flags,
		Action:      fitAction,
	}
}

// maxFitTraces bounds the traces of one fit (each is replayed every round).
const maxFitTraces = 64

// fitAction validates every flag and fits (calibrate.RunFit).
func fitAction(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	args, err := cli.Positional(c, maxFitTraces)
	if err != nil {
		return err
	}
	job, err := fitJob(c)
	if err != nil {
		return err
	}
	job.Traces = calibrate.FitArgs{Args: args, TraceHeader: c.String("trace-header"), TraceData: c.String("trace-data"),
		ITLData: c.String("itl-data"), ITLDataSet: c.IsSet("itl-data")}
	job.Stdin, job.Stdout, job.Stderr, job.Log = stdio.In, stdio.Out, stdio.Err, log
	return calibrate.RunFit(ctx, job)
}

// fitJob checks the setting flags shared by every trace of a fit.
func fitJob(c *ucli.Context) (calibrate.Fit, error) {
	job := calibrate.Fit{
		Resolver: &replay.FlagResolver{Flags: cli.SpecValues(c, replay.ResolverFlags()),
			GivenMode: c.String("session-mode"), GivenModeSet: c.IsSet("session-mode")},
		Seed: c.Int64("seed"), SeedSet: c.IsSet("seed"),
		Output: c.String("output"), Quiet: c.Bool("quiet"), Inputs: []outfile.Named{{What: "--deployment", Path: c.String("deployment")}},
		Settings: fit.Settings{WarmupRequests: c.Int64("warmup-requests"), NetworkRTTUs: c.Int64("network-rtt-us"),
			ThinkTimeSet: c.IsSet("think-time"), IgnoreTraceClient: c.Bool("ignore-trace-deployment")},
		Config: fit.Config{Holdout: c.Float64("holdout"), MaxIterations: c.Int("max-iterations"), FitTokenOverhead: c.Bool("fit-token-overhead")},
	}
	if h := job.Config.Holdout; math.IsNaN(h) || h < 0 || h >= 1 {
		return job, exitcode.Usagef("--holdout %v: want a share in [0, 1)", h)
	}
	if job.Settings.WarmupRequests < -1 {
		return job, exitcode.Usagef("--warmup-requests %d: want -1 (the header's value) or a count >= 0", job.Settings.WarmupRequests)
	}
	if err := calibrate.CheckNetworkRTT(job.Settings.NetworkRTTUs); err != nil {
		return job, err
	}
	if n := job.Config.MaxIterations; n < 1 || n > 1000 {
		return job, exitcode.Usagef("--max-iterations %d: want 1 to 1000", n)
	}
	for _, f := range []struct {
		flag string
		dst  *[3]bool
	}{{"hold-alpha", &job.Config.HoldAlpha}, {"fit-alpha", &job.Config.FitAlpha}} {
		for _, i := range c.IntSlice(f.flag) {
			if i < 0 || i > 2 {
				return job, exitcode.Usagef("--%s %d: want an alpha index 0, 1 or 2", f.flag, i)
			}
			f.dst[i] = true
		}
	}
	if m := c.String("session-mode"); m != "fixed" && m != "closed-loop" {
		return job, exitcode.Usagef("--session-mode %q: want fixed or closed-loop", m)
	}
	d := c.Duration("think-time")
	if d < 0 {
		return job, exitcode.Usagef("--think-time %v is negative", d)
	}
	job.Settings.ThinkTimeUs = d.Microseconds()
	return job, nil
}
