package main

import (
	"context"
	"io"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/flagspec"
	"servesim/internal/outfile"
	"servesim/internal/replay"
	"servesim/internal/replay/timeline"
	"servesim/internal/tracev2/importer"
	"servesim/internal/workload"
)

func command() cli.Command {
	flags := []ucli.Flag{
		cli.SeedFlag(),
		cli.FormatFlag("json", "stdout format: json (the summary, keys documented in the README) or text", "json", "text"),
		&ucli.StringFlag{Name: "metrics-out", Category: flagspec.CatOutput, Usage: "also write the summary JSON to this file"},
		&ucli.StringFlag{Name: "results-path", Category: flagspec.CatOutput, Usage: "write every request's SimResult as a JSON array in request_id order (replay's --results-path, BLIS's per-request output) to this file; - takes stdout and the summary goes to stderr"},
		&ucli.StringFlag{Name: "fleet-html", Category: flagspec.CatOutput, Usage: "with --fleet-file, write a page of the fleet over time (traffic, replicas, p99 TTFT per bucket) to this file"},
		&ucli.StringFlag{Name: "timeline", Category: flagspec.CatOutput, Usage: "write a Chrome trace-event JSON of the run to this file (open it in ui.perfetto.dev): a process per instance with its steps, KV and batch counters and requests; with a cluster, a router process with routing decisions, rejections and P/D KV transfers; slows the run"},
	}
	// With --trace-output - the trace takes stdout and the summary goes to stderr.
	flags = append(flags, cli.SimOutputFlags()...)
	flags = append(flags, cli.SpecFlags(append(workload.Flags(), workload.ListFlags()...))...)
	flags = append(flags, cli.SpecFlags(append(replay.ClientFlags(false), replay.TimeScaleFlag()))...)
	flags = append(flags, cli.SpecFlags(append(deploy.Flags(), deploy.ListFlags()...))...)
	flags = append(flags, cli.SpecFlags(append(replay.DecisionFlags(), replay.SLOFlag(), replay.FitnessFlag()))...)
	return cli.Command{
		Name:      "run",
		Usage:     "simulate a synthetic workload on a vLLM deployment and print its metrics",
		ArgsUsage: " ",
		Description: `run generates a seeded workload (a preset, a spec YAML, or flags), simulates it
on the described deployment (default: Qwen3-14B on one H100, physics latency
model) and prints aggregate metrics as JSON, or a table with --format text.

` + replay.InterruptedHelp + `
Examples:

   # What would a chatbot at 20 requests/s see on one H100?
   run --workload chatbot --rate 20 --num-requests 2000 --format text

   # The same traffic as a trace, replayed on another deployment:
   run --workload chatbot --rate 20 --trace-output chat
   replay chat.csv --max-num-seqs 64 --format text

   # A load generator that keeps at most 64 requests in flight (observe --max-concurrency):
   run --workload chatbot --rate 40 --num-requests 2000 --client-max-concurrency 64 --format text

   # Through a pipe:
   run --workload summarization --rate 2 --trace-output - | replay - --gpu A100-80

   # Four replicas behind a prefix- and load-aware router, with its decisions:
   run --workload chatbot --rate 80 --num-instances 4 --routing-policy weighted \
       --trace-level decisions --decisions-out decisions.jsonl --format text

   # Prefill/decode disaggregation, as a timeline for ui.perfetto.dev:
   run --workload chatbot --rate 40 --num-requests 200 --prefill-instances 1 \
       --decode-instances 2 --pd-decider always --timeline pd-timeline.json --format text`,
		Flags:       flags,
		Action:      action,
		Subcommands: []cli.Command{sweepCommand()},
		Choices:     cli.JoinChoices(deploy.FlagChoices(), workload.FlagChoices(), importer.FlagChoices()),
	}
}

// action is run: the flags as one replay.RunCommand.
func action(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	if _, err := cli.Positional(c, 0); err != nil {
		return err
	}
	return replay.ExecuteRun(ctx, replay.RunCommand{
		Format: c.String("format"), TimeScale: c.Float64("time-scale"), TimeScaleSet: c.IsSet("time-scale"),
		Workload: func() (workload.Options, error) {
			return workload.FromFlags(cli.SpecValues(c, append(workload.Flags(), cli.SeedSpec())), stdio.In, cli.StdinName)
		},
		Client: func() (replay.Client, error) {
			client, _, err := replay.ClientFromFlags(cli.SpecValues(c, replay.ClientFlags(false)))
			return client, err
		},
		Deployment: func() (deploy.Config, error) {
			v := cli.SpecValues(c, deploy.Flags())
			for _, note := range deploy.IgnoredFlagNotes(v) {
				log.Warn(note)
			}
			return deploy.FromFlags(v)
		},
		OpenDecisions: func() (*outfile.Output, error) {
			return replay.OpenDecisions(cli.SpecValues(c, replay.DecisionFlags()))
		},
		CounterfactualK: c.Int("counterfactual-k"),
		MetricsOut:      c.String("metrics-out"), Timeline: c.String("timeline"), FleetHTML: c.String("fleet-html"), ResultsPath: c.String("results-path"), SLO: c.String("slo"), Fitness: c.String("fitness-weights"),
		Sim:         replay.SimOutputPaths{RequestsOut: c.String("requests-out"), TraceOutput: c.String("trace-output"), BLISHeader: c.Bool("blis-compatible-header")},
		ToolVersion: cli.Version,
		Inputs: []outfile.Named{{What: "--deployment", Path: c.String("deployment")}, {What: "--workload-spec", Path: c.String("workload-spec")},
			{What: "--hardware-file", Path: c.String("hardware-file")}, {What: "--model", Path: c.String("model")}},
		Outputs: []outfile.Named{{What: "--decisions-out", Path: c.String("decisions-out")}},
		Stdout:  stdio.Out, Stderr: stdio.Err, Log: log,
		NewTimeline: func(w io.Writer) replay.Observer { return timeline.New(w) },
		NewProgress: func(total int64, desc string) replay.Progress {
			return cli.NewProgress(stdio.Err, c.Bool("quiet"), total, desc)
		},
	})
}
