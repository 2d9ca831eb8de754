package main

import (
	"context"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
)

func command() cli.Command {
	return cli.Command{
		Name:      "observe",
		Usage:     "load a live OpenAI-compatible server (vLLM) and record every request as a TraceV2 trace",
		ArgsUsage: " ",
		Description: `observe sends a workload (a spec YAML, a preset, or flags) to a server at the
intended times, open or closed loop, and records each request's send, first-chunk
and last-chunk times. Latencies are measured from the intended send time as well,
so a slow server cannot hide queueing behind the client (no coordinated omission).

Example: capture a trace, replay it on the simulator, and grade the simulator:

   observe --url http://127.0.0.1:8000 --model qwen3-14b --workload chatbot --rate 4 \
           --num-requests 200 --trace-output cap
   replay cap.csv --model qwen3-14b --results-path sim.json
   calibrate cap.csv sim.json --html report.html`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "url", Usage: "base URL of the server, e.g. http://127.0.0.1:8000"},
			&ucli.StringFlag{Name: "model", Usage: "model name sent in each request"},
			cli.SeedFlag(),
		},
		Action: func(ctx context.Context, c *ucli.Context, io cli.IO, log *slog.Logger) error {
			return cli.NotYet("observe")
		},
	}
}
