// Command calibrate grades the simulator against reality: it pairs a real
// trace with the SimResults of its replay and writes the report of
// spec/calibrate.md as text, JSON, Markdown or HTML, with CI gates (exit 3).
//
// It is a thin main: it turns flags and positional arguments into a
// report.Config, reads the inputs through internal/tracev2, and hands them to
// internal/report, which does every computation and rendering. It owns only
// what is about the command line: which input is stdin (at most one, read
// first), the sibling ITL file, the atomic output files, and exit codes. It
// must never compute a statistic itself nor know the simulator.
package main
