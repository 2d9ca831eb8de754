// Command replay feeds a trace through the simulator: a TraceV2 trace in any
// form (single stream, two files, stdin, gzip) or a foreign one imported with
// --from (Azure, Mooncake, Vidur, vllm bench), on the deployment described by
// the same flags and YAML as run. It writes SimResult JSON, optionally the
// summary, a replayed TraceV2, per-request lines and a Perfetto timeline.
//
// It is a thin main: it validates flags, reads and checks the whole trace
// before opening any output (so bad input is exit 2 with nothing written),
// and hands the rows to internal/replay, the path run uses too. It must never
// simulate, synthesise tokens or compute a metric itself.
package main
