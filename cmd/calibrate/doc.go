// Command calibrate grades the simulator against reality: it pairs a real
// trace with the SimResults of its replay and writes the report (see
// docs/calibrate.md) as text, JSON, Markdown or HTML, with CI gates (exit 3).
// `calibrate fit` closes the loop: it fits the latency model's coefficients
// so that the replay reproduces the trace, and writes them as a deployment
// YAML that run and replay take with --deployment.
//
// It is a thin main: it turns flags and positional arguments into one
// calibrate.Grade or calibrate.Fit and makes one call, calibrate.Run or
// calibrate.RunFit (internal/calibrate opens the inputs and writes the
// outputs; internal/report and internal/fit do every statistic, replay and
// solve). It owns only the command line: flags, their checks, how each
// trace's deployment, session mode and client follow from them (a
// fit.Resolver over internal/cli), and exit codes.
package main
