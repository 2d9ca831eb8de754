package main

import (
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/tracev2/importer"
	"servesim/internal/tracev2/input"
)

// loadInput opens the trace the command line names (input.Open). With
// stream, a foreign trace may be left open to be read as it is replayed.
func loadInput(c *ucli.Context, stdio cli.IO, log *slog.Logger, stream bool) (*input.Trace, error) {
	return input.Open(input.Config{Paths: c.Args().Slice(), HeaderPath: c.String("trace-header"), DataPath: c.String("trace-data"),
		From: importer.Format(c.String("from")), Lenient: c.Bool("lenient"), Strict: c.Bool("strict"),
		Stdin: stdio.In, Log: log, Stream: stream})
}
