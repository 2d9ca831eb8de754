// Command calibrate grades the simulator against reality: it pairs a real
// trace with the SimResults of its replay and writes the report of
// spec/calibrate.md as text, JSON, Markdown or HTML, with CI gates (exit 3).
// `calibrate fit` closes the loop: it fits the latency model's coefficients
// so that the replay reproduces the trace, and writes them as a deployment
// YAML that run and replay take with --deployment.
//
// It is a thin main: it turns flags and positional arguments into a
// report.Config or a fit.Config, reads the inputs through internal/tracev2,
// and hands them to internal/report (every statistic and rendering) or
// internal/fit (every replay and solve). It owns only what is about the
// command line: which input is stdin (at most one, read first), the sibling
// ITL file, the atomic output files, the fitted deployment's YAML layout,
// the summaries on stderr, and exit codes. It must never compute a statistic
// or a coefficient itself, nor drive the simulator except through those
// packages.
package main
