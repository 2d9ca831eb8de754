// Package sweep is capacity planning without an engine: the grid of cases a
// sweep runs (parsed from a YAML sweep file or --grid flags, with
// file:line:column errors), the SLO language ('ttft.p99<500ms,itl.p99<50ms'),
// the row each case yields and its verdict, the steady-state test, the
// max-rate search, the analysis of the rows (knee of the latency curve,
// cheapest deployment that meets the SLO, Pareto front of cost against
// latency), GPU prices, the intervals of every answer (Interval: each case
// run again at the ends of its model's step-time uncertainty and with
// further seeds, through a VariantFunc), and the merge of the outputs of a
// sweep fanned out over shards.
//
// It also holds what a sweep command does beyond parsing its command line:
// the sweep's flags as flagspec descriptions and the Options built from
// their values (Prepare), running a Job's cases with shards and progress
// (Execute), the tables and page written where the flags say (Write: CSV
// and JSON here, the text table and the HTML page drawn by a Pages, which
// internal/report implements), --summaries, fingerprints, and `sweep merge`
// (MergeFiles).
//
// Rows come from whatever runs a case: the simulator (internal/replay drives
// it for `run sweep` and `replay sweep`) or a live server. This package
// therefore never imports the simulator (internal/des), the deployment
// resolver, the load generator, the report or the CLI; a case reaches it
// as a RunFunc.
// It never writes to stdout or stderr on its own: writers take an io.Writer.
//
// Determinism: a case's row depends only on the case, never on the order in
// which cases ran or on which shard ran it, so a merged sweep prints exactly
// what one machine prints.
package sweep
