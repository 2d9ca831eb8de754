// Command replay feeds a trace through the simulator: a TraceV2 trace in any
// form (single stream, two files, stdin, gzip, pipes) or a foreign one
// imported by its detected format or --from (Azure, Mooncake, Vidur, vllm
// bench, LLMServingSim), on the deployment described by the same flags and
// YAML as run. It writes SimResult JSON, optionally the summary, a replayed
// TraceV2, per-request lines and a Perfetto timeline.
//
// It is a thin main: it turns its flags into one replay.Command (or
// replay.SweepCommand) and calls the library, which reads and checks the
// whole trace before opening any output. It must never open a trace,
// simulate, synthesise tokens or compute a metric itself.
package main
