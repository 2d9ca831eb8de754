package tracev2

import "io"

// Create opens a trace output named the way every command's --trace-output
// names it: "-" is the single-stream form on stdout, anything else a prefix
// for the two-file form (PrefixPaths; x_ext in the header with withExt,
// else in the sidecar that BLIS's strict loader leaves alone).
func Create(prefix string, stdout io.Writer, h *Header, cols Columns, withExt bool) (*TraceWriter, error) {
	if prefix == "-" {
		return NewStreamWriter(stdout, h, cols)
	}
	hp, dp, _ := PrefixPaths(prefix)
	return CreateFiles(hp, dp, h, cols, withExt)
}
