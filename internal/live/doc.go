// Package live is observe's library half: it loads a live OpenAI-compatible
// server (vLLM) with a traffic and records every request as a TraceV2 trace
// (mode real), row by row as requests finish, with an optional ITL CSV and
// /metrics time series, a progress bar and an end summary in vllm bench
// serve's metric names.
//
// A traffic is a workload (spec, preset, flags) or a trace played back
// (rows at their recorded times, prefix groups and hash-id blocks as shared
// leading text), opened through the trace input layer every command uses
// (internal/tracev2/input) and read once, as far as the window it plays. A planner turns it into httpload jobs, and record turns
// each finished job into a trace row on the run's one time origin t0
// (docs/workload.md, docs/tracev2.md). The package also owns the run's life
// cycle: set-up (model, tokenizer ratio, self-test, warm-up, prewarm), the
// two-stage interrupt and the errors' exit codes (an ExitCode method); the
// server's facts for the header (declared by --server-config and
// --vllm-args, its secrets redacted, measured from /version, /metrics and
// /v1/models, and checked before they are recorded); the
// /metrics scrapes; vllm bench serve's result JSON; the runs made of runs:
// a live sweep (a run per level, a level whose backlog grows faster than it
// completes stopped early as over-saturated, the
// rows, SLO, table and page those of the simulated sweep in internal/sweep
// and internal/report), one slice of a run fanned out over client machines,
// and the merge of their traces; and the plan of a dry run.
//
// Run is the one entry point: a Config (the flags, typed) and an IO (the
// streams, the logger, a progress bar, the second interrupt). It never
// writes to the process's stdout or stderr on its own, never parses flags
// and never imports the CLI layer. It must not know the simulator: what it
// writes is read by replay and calibrate through tracev2 alone. It reaches
// the simulator's packages only through internal/deploy, whose key list
// checks a declared deployment. The in-process fake server
// (httpload/fakevllm) is used only by the self-test, never on the measured
// path.
package live
