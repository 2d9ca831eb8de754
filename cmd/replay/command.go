package main

import (
	"context"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
)

func command() cli.Command {
	return cli.Command{
		Name:      "replay",
		Usage:     "feed a trace (TraceV2, BLIS, Azure, Mooncake, ...) through the vLLM simulator",
		ArgsUsage: "[TRACE|-]",
		Description: `replay injects every request of a trace at its send time into a discrete-event
simulator of vLLM (continuous batching, chunked prefill, paged KV cache with prefix
caching, preemption) and writes one SimResult per completed request.

Example: what would this production traffic look like on two H100 replicas?

   replay --from azure AzureLLMInferenceTrace_conv.csv --model qwen3-14b --num-instances 2 \
          --results-path sim.json
   observe ... -o - | replay - --model qwen3-14b | calibrate cap.csv -`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "model", Usage: "model to simulate (see run --help for known names)"},
			cli.SeedFlag(),
		},
		Action: func(ctx context.Context, c *ucli.Context, io cli.IO, log *slog.Logger) error {
			return cli.NotYet("replay")
		},
	}
}
