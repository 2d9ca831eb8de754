// Package e2e proves the whole suite against a real inference server: Ollama
// (llama.cpp inside, continuous batching over parallel slots, a KV cache,
// real prefill and decode compute on the CPU) serving a tiny random-weight
// llama that internal/gguf writes.
//
// The package holds only a test, run by `make e2e` (SERVESIM_E2E=1); under
// `go test ./...` it skips at once. The loop: build (e2e/build-ollama.sh,
// cached) and start the server on 127.0.0.1, create the model, load it with
// observe at several levels (closed loop at concurrency 1, 2, 4, 8, c1 once
// more to measure the server's own noise, and Poisson arrivals at half the
// capacity measured at 4 users), fit the simulator's blackbox latency model
// with `calibrate fit` on c1 and c4 merged into one trace, replay the
// held-out runs with a deployment that describes the server (closed-loop
// runs with --session-mode closed-loop), grade every run with calibrate and
// write the HTML reports and summary.md into SERVESIM_E2E_OUT. It asserts structure and order, not milliseconds: every request
// ok, one chunk per token, TTFT growing with the prompt, ITL growing with
// concurrency, requests beyond the 4 slots queueing, and a held-out E2E MAPE
// under a measured threshold.
//
// What the server's scheduler does, read in Ollama v0.17.4's runner
// (runner/llamarunner) and confirmed by the measurement in this test
// (TestOllamaLoop/prefill): every step it walks the busy slots round robin
// and adds up to num_batch (512) pending tokens of each to one batch —
// prompt tokens of a slot still in prefill, the last sampled token of a slot
// in decode — and decodes that batch at once (llama.cpp cuts it into
// micro-batches of 512 internally). So prefill is chunked per request at 512
// tokens, mixed with the decode tokens of the other slots, and a step holds
// at most 4 × 512 tokens; a request beyond the 4 slots waits for a free slot
// in the server. In the simulator that is max_num_seqs 4,
// long_prefill_token_threshold 512, max_num_batched_tokens 2048.
//
// Measured here and not modelled by the simulator (see heldOutBound): the
// decode step is not linear in the batch (1.5, 3.2, 5.4 ms for 1, 2, 4
// sequences), and under Poisson arrivals the server decodes about 1.35×
// slower than under a closed loop with as many requests in flight.
// llama.cpp's CPU flash attention is turned off: it made a 4,400-token
// prefill 4× slower.
//
// This package must never be imported; it knows the binaries only by their
// command lines and their files.
package e2e
