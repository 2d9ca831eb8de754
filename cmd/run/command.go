package main

import (
	"context"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
)

func command() cli.Command {
	return cli.Command{
		Name:      "run",
		Usage:     "simulate a synthetic workload on a vLLM deployment and print its metrics",
		ArgsUsage: " ",
		Description: `run generates a seeded workload (a preset, a spec YAML, or flags), simulates it
on the described deployment and prints aggregate metrics as JSON (or a text table).

Example: what latency would a chatbot at 20 requests/s see on one H100 with Qwen3-14B,
and how does the same traffic fare on two replicas?

   run --workload chatbot --rate 20 --model qwen3-14b --gpu H100 --format text
   run --workload chatbot --rate 20 --model qwen3-14b --trace-output chat
   replay chat.csv --model qwen3-14b --num-instances 2 | jq .`,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "model", Value: "qwen3-14b", Usage: "model to simulate"},
			cli.SeedFlag(),
			cli.FormatFlag("json", "stdout format: json or text"),
		},
		Action: func(ctx context.Context, c *ucli.Context, io cli.IO, log *slog.Logger) error {
			return cli.NotYet("run")
		},
	}
}
