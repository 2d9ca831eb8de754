// Package report compares a real trace with the simulated results of its replay and
// renders the comparison (docs/calibrate.md).
//
// It pairs trace rows with SimResults by request_id, classifies every row into one
// bucket, normalises the simulated side for the network, computes per-metric
// statistics (workload percentiles, MAPE, Pearson r, bias, grade), goodput against
// SLO targets, the per-class and per-tenant tables of a run behind a gateway
// (attainment, p99s, and the requests refused, shed, expired or evicted, read
// from each row by tracev2.OutcomeOf), the verdicts (TTFT tolerance, hit rate, config match, run validity),
// the ramp and the steady state of the real run graded apart, and CI gates, and writes the result as JSON, text, Markdown or a self-contained
// HTML page to an io.Writer.
//
// Inputs arrive already decoded and with normalised time origins (docs/tracev2.md §5):
// report reads no files, parses no flags and chooses no exit code; its errors carry
// ExitCode methods (InputError: 2, GateError: 3) for main to map.
//
// It must never know the simulator (internal/des) or the load generator
// (internal/httpload): it sees only tracev2 records and tracev2.SimResult values, so the
// same report judges any simulator whose output has the SimResult shape.
package report
