// Package httpload loads a live OpenAI-compatible server (vLLM) honestly and
// measures what the client sees: the send instant, the first SSE chunk, the
// first generated token, every chunk, and the last chunk, all in microseconds
// on one monotonic time origin (Clock).
//
// It is built from small parts that are tested on their own:
//
//   - Job and Result: one request to send and everything measured about it.
//   - Client: an HTTP/1.1 keep-alive client for /v1/completions and
//     /v1/chat/completions, streaming (SSE with usage) or not, with an
//     allocation-free SSE line splitter (SSEParser) and chunk decoder.
//   - Intended times: each Job carries its intended send time. The arrival
//     processes (poisson, gamma, weibull, constant) live in the workload
//     package, and a played trace's times in observe's library
//     (internal/live); latencies count from the intended time.
//   - Dispatcher: sends every job at its intended time (open loop, no hidden
//     cap, one goroutine per request in flight), optionally behind a
//     concurrency cap whose wait is recorded, with follow-up jobs created on
//     completion (closed-loop users, session rounds), and a bounded
//     drain on cancellation. Every job gets exactly one Result. It waits on
//     precise timers (subpackage alarm) rather than spinning, because a
//     spinning goroutine starves the network poller the streams read from.
//   - Prompter and Calibration: synthetic prompt text of a requested token
//     length, with shared prefixes deterministic in (seed, group) and
//     blocks deterministic in (seed, hash id) for traces that name their
//     prefix blocks (Mooncake's hash_ids).
//   - ParseMetrics and Client.ScrapeMetrics: the vLLM gauges and counters of
//     a Prometheus /metrics page.
//
// The subpackage fakevllm is an in-process streaming server that imitates
// vLLM, with configurable TTFT and ITL and injectable faults, for tests and
// for measuring the client's own error.
//
// httpload must never know the simulator (internal/des), reports
// (internal/report), the trace format (internal/tracev2) or the workload
// spec: callers map their requests to Jobs and Results to trace records. It
// never writes to stdout or stderr.
package httpload
