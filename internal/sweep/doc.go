// Package sweep is capacity planning without an engine: the grid of cases a
// sweep runs (parsed from a YAML sweep file or --grid flags, with
// file:line:column errors), the SLO language ('ttft.p99<500ms,itl.p99<50ms'),
// the row each case yields and its CSV, JSON and text tables, the
// steady-state test, the max-rate search, the analysis of the rows (knee of
// the latency curve, cheapest deployment that meets the SLO, Pareto front of
// cost against latency), GPU prices, and the merge of the outputs of a sweep
// fanned out over shards.
//
// Rows come from whatever runs a case: the simulator (internal/replay drives
// it for `run sweep` and `replay sweep`) or a live server. This package
// therefore never imports the simulator (internal/des), the deployment
// resolver, the load generator or the CLI; a case reaches it as a RunFunc.
// It never writes to stdout or stderr on its own: writers take an io.Writer.
//
// Determinism: a case's row depends only on the case, never on the order in
// which cases ran or on which shard ran it, so a merged sweep prints exactly
// what one machine prints.
package sweep
