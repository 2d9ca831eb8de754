package main

import (
	"context"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
)

func command() cli.Command {
	return cli.Command{
		Name:      "calibrate",
		Usage:     "compare real and simulated per-request latencies and grade the simulator",
		ArgsUsage: "REAL [SIM]",
		Description: `calibrate pairs each request of a real trace with its simulated result and
reports, per metric (TTFT, ITL, TPOT, E2E), MAPE, Pearson r, bias, percentiles and a
grade; as a text table, JSON, Markdown for CI, or an HTML report with plots.
Exit code 3 when an assertion fails.

Example (a CI gate):

   replay cap.csv --model qwen3-14b --results-path sim.json
   calibrate cap.csv sim.json --format markdown --html report.html \
             --assert 'ttft.mape<0.15,e2e.pearson>0.9'`,
		Flags: []ucli.Flag{
			cli.FormatFlag("text", "stdout format: text, json or markdown"),
		},
		Action: func(ctx context.Context, c *ucli.Context, io cli.IO, log *slog.Logger) error {
			return cli.NotYet("calibrate")
		},
	}
}
