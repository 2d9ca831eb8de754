// Package instance simulates one vLLM instance on a des.Engine (simulator
// spec §3-9): requests, enqueue guards, the wait queue and its scheduler, the
// running batch, batch formation (running requests first, then waiting ones,
// under a token budget and a sequence cap, with chunked prefill and prefix
// caching), preemption, timeouts, the step cycle and its fast-forward.
//
// It knows one instance only: never admission, routing, other instances, the
// request source, sessions, files or the wall clock. Results leave through
// the OnDone callback as they happen; the instance keeps no finished request.
package instance
