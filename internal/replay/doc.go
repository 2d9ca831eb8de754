// Package replay is the one path by which requests reach the simulator:
// `replay` feeds it the rows of a trace, and `run` feeds it the rows its
// workload generator would write, so run/replay parity holds by construction.
//
// It turns trace records into simulator requests (synthesising token ids
// that preserve the trace's sharing structure: prefix groups, Mooncake-style
// prefix block hashes and accumulating sessions), drives the simulator, and
// hands back one simulated trace record per request, one SimResult per
// completed request, and the summary (WriteSummary renders it for both
// commands).
//
// Trace prepares a trace's rows for replay (docs/simulator.md §13, docs/tracev2.md
// §5): injection at the send time or the intended arrival, deadlines that
// keep their budget, rows in injection order, --skip-failed, and the
// closed-loop session manager that creates later rounds at completion plus
// think time. An Observer (the timeline exporter) may watch a run from
// inside without changing it.
//
// A run costs what the simulation costs: ids nothing reads are
// not drawn (a private prompt's own ids; the blocks of hash-id regions,
// which chains names instead), requests and their buffers are reused
// once ended, and nothing is built for an output nobody asked for. Memory
// holds the requests in flight and waiting, and the summary's columns.
//
// Command (replay), SweepCommand (replay sweep), WorkloadSweep (run sweep)
// and RunCommand (run) are
// what those commands do beyond their flags, each a typed configuration
// with one call: read the trace (internal/tracev2/input) or generate the
// workload, decide what is simulated, simulate, and write and commit the
// outputs named (internal/outfile: none looks complete before it is). What
// only the command line knows (progress on a terminal, the flag values
// given) comes in as small interfaces and functions. The flags of the
// simulated client, the routing-decision log and the trace's deployment
// are described here (flagspec), and FlagResolver decides, from their
// values, what a trace is replayed on. A sweep's cases run on the
// simulator here (Sweeper); everything else about a sweep (its flags,
// grid, verdicts, outputs, merge) is internal/sweep's.
//
// It never parses a command line and never writes to stdout or stderr on
// its own: the writers it writes to are its callers'.
package replay
