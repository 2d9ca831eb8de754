// Package instance simulates one vLLM instance on a des.Engine (docs/simulator.md
// §3-9): requests, enqueue guards, the wait queue and its scheduler, the
// running batch, batch formation (running requests first, then waiting ones,
// under a token budget and a sequence cap, with chunked prefill and prefix
// caching), preemption, timeouts, the step cycle and its fast-forward.
//
// It knows one instance only: never admission, routing, other instances, the
// request source, sessions, files or the wall clock. Results leave through
// the OnDone callback as they happen; the instance keeps no finished request.
//
// Two implementations of the step share every decision: runStep (step.go)
// is the plain reference, one request at a time; lazyStep (lazy.go) keeps
// steady decoders implicit and runs consecutive steps inline. Config
// FastForward selects the second; property tests check that both give
// identical results. The Vidur-style batching variants (variants.go:
// vllm-v0, sarathi, orca, faster-transformer, lightllm) form their batches
// their own way and share the reference step's execute and complete
// phases; they never decode lazily but may still run steps inline.
// Pipeline parallelism (pipeline.go) replaces the step cycle by micro-batch
// formation and commit events. A StepObserver (Config.Steps) sees every
// step without turning fast-forward off.
//
// Where the spec leaves room, this package decides:
//
//   - The observational events of priority 7 (Scheduled, Preempted,
//     RequestLeft) are direct Tracer calls, not heap events; the run's end
//     time takes the last completion (LastLeftUs) into account instead.
//   - A step occupies the server for its whole Δ: a request queued while the
//     last step still executes (its effects were applied at its start) is
//     stepped at that step's end, not at once (the M/D/1 test depends on it).
//   - An empty prompt is dropped as unservable.
//   - Full blocks are hashed when they are allocated (scheduling time). When
//     two blocks hold the same hash the first stays indexed; the second is
//     reachable only after the first is evicted and the hash re-registered.
//   - The CPU tier reloads only on admission (prefix match); fast-forward is
//     off when the CPU tier or a Tracer is configured.
//   - slo-aging orders by base + w·arrival_s, which orders exactly as
//     base − w·age does at every instant, so nothing is re-sorted per step.
//   - INV-12 holds except when Phase 1 stops because a request's own
//     allocation chose itself as the victim (vLLM does the same).
//   - Reset mode keeps earlier ITL samples and re-records TTFT (as BLIS).
//   - KV utilisation is weighted by step time Δ (idle time excluded).
//   - P/D decode parts (ReserveDecode, SubmitDecode) hold their blocks while
//     they wait and are admitted before other waiting requests under every
//     scheduler: they allocate nothing, and behind a head-of-line request
//     that needs their blocks they would wait forever.
package instance
