package main

import (
	"context"
	"io"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/outfile"
	"servesim/internal/replay"
	"servesim/internal/replay/timeline"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
	"servesim/internal/tracev2/input"
)

// action is replay: the flags as one replay.Command.
func action(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	res := newResolver(c)
	trace := traceSettings(c)
	trace.SLO = c.String("slo")
	trace.Fitness = c.String("fitness-weights")
	trace.TimeScale, trace.TimeScaleSet = c.Float64("time-scale"), c.IsSet("time-scale")
	return replay.Execute(ctx, replay.Command{
		Input: traceInput(c, stdio), Trace: trace,
		Format: c.String("format"), ResultsPath: c.String("results-path"), Interval: c.Bool("interval"), MetricsOut: c.String("metrics-out"), Timeline: c.String("timeline"), FleetHTML: c.String("fleet-html"),
		Sim:             replay.SimOutputPaths{RequestsOut: c.String("requests-out"), TraceOutput: c.String("trace-output"), BLISHeader: c.Bool("blis-compatible-header")},
		CheckDeployment: res.Check, Resolver: res,
		OpenDecisions: func() (*outfile.Output, error) {
			return replay.OpenDecisions(cli.SpecValues(c, replay.DecisionFlags()))
		},
		CounterfactualK: c.Int("counterfactual-k"),
		ToolVersion:     cli.Version,
		Inputs: []outfile.Named{{What: "--deployment", Path: c.String("deployment")},
			{What: "--hardware-file", Path: c.String("hardware-file")}, {What: "--model", Path: c.String("model")}},
		Outputs: []outfile.Named{{What: "--decisions-out", Path: c.String("decisions-out")}},
		Stdout:  stdio.Out, Stderr: stdio.Err, Log: log,
		NewTimeline: func(w io.Writer) replay.Observer { return timeline.New(w) },
		NewProgress: func(total int64, desc string) replay.Progress {
			return cli.NewProgress(stdio.Err, c.Bool("quiet"), total, desc)
		},
	})
}

// traceInput is the trace the command line names.
func traceInput(c *ucli.Context, stdio cli.IO) input.Config {
	return input.Config{Paths: c.Args().Slice(), HeaderPath: c.String("trace-header"), DataPath: c.String("trace-data"),
		From: importer.Format(c.String("from")), Lenient: c.Bool("lenient"), Strict: c.Bool("strict"), Stdin: stdio.In}
}

// traceSettings are the flags of traceFlags that say how the rows become
// requests, for replay and replay sweep.
func traceSettings(c *ucli.Context) replay.TraceFlags {
	return replay.TraceFlags{
		InjectAt: c.String("inject-at"), InjectAtSet: c.IsSet("inject-at"),
		SessionMode: c.String("session-mode"),
		ThinkTime:   c.Duration("think-time"), ThinkTimeSet: c.IsSet("think-time"),
		Horizon: c.Duration("horizon"),
		Rate:    c.Float64("rate"), RateSet: c.IsSet("rate"),
		HashBlockTokens: c.Int("hash-block-tokens"),
		Seed:            c.Int64("seed"), SeedSet: c.IsSet("seed"),
		SkipFailed:            c.Bool("skip-failed"),
		IgnoreTraceDeployment: c.Bool("ignore-trace-deployment"),
	}
}

// newResolver decides the deployment, the session mode and the client from
// the flags and the trace's header, reading --deployment once.
func newResolver(c *ucli.Context) *replay.FlagResolver {
	return &replay.FlagResolver{Flags: cli.SpecValues(c, replay.ResolverFlags()),
		GivenMode: c.String("session-mode"), GivenModeSet: c.IsSet("session-mode")}
}

// resolver is newResolver for each question apart, as replay sweep asks.
type resolver struct{ c *ucli.Context }

func (r resolver) Deployment(name string, h *tracev2.Header, warn func(string)) (deploy.Config, error) {
	return newResolver(r.c).Deployment(name, h, warn)
}

func (r resolver) SessionMode(name string, h *tracev2.Header, warn func(string)) (string, error) {
	return newResolver(r.c).SessionMode(name, h, warn)
}

func (r resolver) Client(name string, stated *tracev2.Client, detect func() (replay.Client, bool, string, error), warn, debug func(string)) (replay.Client, error) {
	return newResolver(r.c).Client(name, stated, detect, warn, debug)
}
