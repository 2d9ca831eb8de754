package cli

import (
	"servesim/internal/tracev2"
)

// CreateTrace opens a trace output: "-" is the single-stream form on stdout,
// anything else a prefix for the two-file form (PREFIX.yaml + PREFIX.csv,
// x_ext in the header with withExt, else in PREFIX.ext.yaml so that BLIS
// loads the header).
func CreateTrace(prefix string, stdio IO, h *tracev2.Header, cols tracev2.Columns, withExt bool) (*tracev2.TraceWriter, error) {
	if prefix == "-" {
		return tracev2.NewStreamWriter(stdio.Out, h, cols)
	}
	hp, dp, _ := tracev2.PrefixPaths(prefix)
	tw, err := tracev2.CreateFiles(hp, dp, h, cols, withExt)
	if err != nil {
		return nil, WithCode(ExitFailure, err)
	}
	return tw, nil
}
