// Package fakevllm is an in-process HTTP server that streams like vLLM's
// OpenAI-compatible server, for tests and for measuring a client's own
// error: /v1/completions and /v1/chat/completions (SSE with a role chunk,
// one content chunk per token, an optional usage-only chunk and [DONE], or a
// whole JSON body), /tokenize, /metrics (with vllm:cache_config_info, the
// KV cache configuration vLLM publishes there), /version, /v1/models and
// /health, with a configured time
// to first token (TTFT) and inter-token latency (ITL) held by a precise
// wake-up hub, and injectable faults (HTTP errors with a body, connection
// resets, stalls, malformed SSE, error events, streams without [DONE]).
//
// It records what it did: every request it parsed, and, on request, the
// instant each chunk left it, so a test can compare the client's stamps with
// the server's truth on the same monotonic clock.
//
// It listens on 127.0.0.1 only. It must never be used by production code
// paths, and it knows nothing of the client in the parent package.
package fakevllm
