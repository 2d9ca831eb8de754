package cli

import (
	ucli "github.com/urfave/cli/v2"

	"servesim/internal/flagspec"
)

// SimOutputFlags are the per-request output flags of run and replay.
func SimOutputFlags() []ucli.Flag {
	return InCategory(flagspec.CatOutput,
		&ucli.StringFlag{Name: "requests-out", Usage: "write one JSON line per request (completed or not) to this file"},
		&ucli.StringFlag{Name: "trace-output", Usage: "write the simulated trace: PREFIX.yaml + PREFIX.csv, or - for one stream on stdout"},
		BLISHeaderFlag(),
		TraceExtFlag(),
	)
}

// BLISHeaderFlag is --blis-compatible-header, for every command that writes
// a two-file trace.
func BLISHeaderFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "blis-compatible-header", Category: flagspec.CatOutput, Usage: "write a two-file trace header that BLIS's strict loader accepts: our x_ext block (deployment, client, ...) goes to PREFIX.ext.yaml beside it, which our readers merge back"}
}

// TraceExtFlag is the old --trace-ext, kept so that scripts still run: x_ext
// is now in every header unless --blis-compatible-header.
func TraceExtFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "trace-ext", Hidden: true, Usage: "no effect: x_ext is written by default (see --blis-compatible-header)"}
}
