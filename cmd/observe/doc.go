// Command observe loads a live OpenAI-compatible server (vLLM) with a
// workload and records every request as a TraceV2 trace (mode real), row by
// row as requests finish, with an optional ITL CSV and /metrics time series,
// a live progress bar and an end summary in vllm bench serve's metric names.
//
// It owns the mapping between the three shared languages: workload requests
// become httpload jobs (workload.md §10), httpload results become trace rows
// (tracev2.md §4) on one time origin t0. What it sends is a traffic: a
// workload (spec, preset, flags) or a trace played back (--trace: rows at
// their recorded times, prefix groups and hash-id blocks as shared leading
// text). It also owns the run's life cycle: set-up (model, tokenizer ratio,
// self-test, warm-up, prewarm), the two-stage interrupt, and exit codes; and
// the runs made of runs: a live sweep (--sweep, --rates: a run per level, an
// over-saturated level stopped early, the rows, SLO, table and page those of
// the simulated sweep in internal/sweep and internal/report), one slice of a run fanned out over
// client machines (--shard, --start-at) and the merge of their traces
// (--merge). Besides the trace it can write vllm bench serve's result JSON
// (--result-json) and the plan without a server (--dry-run).
//
// It must never know the simulator (internal/des) or the report internals:
// what it writes is read by replay and calibrate through tracev2 alone. The
// in-process fake server (httpload/fakevllm) is used only by the self-test,
// never on the measured path.
package main
