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
		Name:      "calibrate steps",
		Usage:     "the real engine steps of a trace, read from its chunk times, beside the latency model's step times",
		ArgsUsage: "REAL",
		Description: `calibrate steps reads the engine steps of a real trace (TraceV2, any form; - for
stdin) out of the times its chunks arrived, and prints, by step type, the real
step times beside the ones the latency model of its deployment predicts.

A continuous-batching server ends every step with one token for each running
request. Chunk times of all requests within --step-window of each other are one
step end; the steps between two ends are counted from the tokens each request
must have (output tokens − 1 steps after its first token). A step whose start
and end are one step apart is kept, with its batch: the decodes running (and
the context they hold) and the prompts that produced their first token in it,
with the earlier chunks of a prompt longer than what max_num_batched_tokens
leaves after the decodes on the steps before. A request whose chunks contradict
the others' (a preemption, or a window that merges two steps) is not explained;
the summary says how many chunks are.

Every chunk is known from the ITL file (NAME.itl.csv beside the trace, or
--itl-data; observe --record-itl writes it). Without it only each request's
first and last chunk are, which places few steps.

The deployment is the one replay would simulate: the trace's header under
--deployment and the flags. Rows: decode only, one prompt, several prompts, by
the number of decodes running; real and predicted median and mean, in ms, and
the error of the predicted mean.

With --fit-out, the physics model is fitted to the steps themselves (a step's
time is linear in the inverse shares and the eager cost, so no replay is
needed, and queueing blurs nothing: far better conditioned than per-request
errors at saturation), and the fitted deployment is written for replay
--deployment.

Exit codes: 0 success, 1 runtime failure, 2 bad usage or invalid input.

Examples:

   observe --url http://127.0.0.1:8000 --model qwen3-14b --workload chatbot --rate 4 \
     --record-itl -o cap
   calibrate steps cap.csv --format markdown -o steps.md
   calibrate steps cap.csv --fit-out fitted.yaml -o steps.txt`,
		Flags:  flags,
		Action: stepsAction,
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
