// Package replay is the one path by which requests reach the simulator:
// `replay` feeds it the rows of a trace, and `run` feeds it the rows its
// workload generator would write, so run/replay parity holds by construction.
//
// It turns trace records into simulator requests (synthesising token ids
// that preserve the trace's sharing structure: prefix groups and accumulating
// sessions), drives the simulator, and hands back one simulated trace record
// per request, one SimResult per completed request, and the summary.
//
// It never reads flags or files and never writes to stdout or stderr; its
// callers own the I/O.
package replay
