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
	return replay.Execute(ctx, replay.Command{
		Input: traceInput(c, stdio), Trace: traceSettings(c),
		Format: c.String("format"), ResultsPath: c.String("results-path"), MetricsOut: c.String("metrics-out"), Timeline: c.String("timeline"),
		Sim:             replay.SimOutputPaths{RequestsOut: c.String("requests-out"), TraceOutput: c.String("trace-output"), BLISHeader: c.Bool("blis-compatible-header")},
		CheckDeployment: func() error { _, err := cli.Deployment(c); return err },
		Resolver:        resolver{c},
		OpenDecisions:   func() (*outfile.Output, error) { return cli.OpenDecisions(c) },
		ToolVersion:     cli.Version,
		Stdout:          stdio.Out, Stderr: stdio.Err, Log: log,
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

// resolver decides the deployment, the session mode and the client from
// the flags and the trace's header (internal/cli's trace rules).
type resolver struct{ c *ucli.Context }

func (r resolver) Deployment(name string, h *tracev2.Header, warn func(string)) (deploy.Config, error) {
	return cli.TraceDeployment(r.c, name, h, warn)
}

func (r resolver) SessionMode(name string, h *tracev2.Header, warn func(string)) (string, error) {
	return cli.TraceSessionMode(r.c, name, h, warn)
}

func (r resolver) Client(name string, stated *tracev2.Client, detect func() (replay.Client, bool, string, error), warn, debug func(string)) (replay.Client, error) {
	return cli.TraceClient(r.c, name, stated, detect, warn, debug)
}
