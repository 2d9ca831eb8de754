// Package cluster simulates N vLLM instances on one shared engine
// (docs/simulator.md §10, §12): admission (always-admit, token bucket,
// reject-all, tier-shed, gaie-legacy), the gateway of SLO tiers (tenant
// budgets, and flow control's queue with its bands, dispatch tick, TTL and
// in-flight eviction: gateway.go), routing (round-robin, random, least-loaded,
// least-outstanding, always-busiest, weighted scorers over fresh or stale
// signals), admission and routing latencies, prefill/decode
// disaggregation with KV transfers, and per-instance totals. Like sim, it
// pulls requests lazily from a Source, streams every result to a Sink
// exactly once, and lets a caller inject follow-ups.
//
// Event order follows docs/simulator.md §2: cluster events (Arrival, Admission,
// Routing, TransferDone) sort before instance events at equal times, and
// instance events of equal time and priority run in instance order (the
// engine's sub-priority). Zero latencies collapse Arrival, Admission,
// Routing and InstanceArrival into one event, which orders exactly as the
// separate events would: nothing but other arrivals can run between them.
//
// Instances keep their fast-forward: an instance runs steps inline until
// the next cluster event or its own next event, since other instances'
// steps can neither observe nor change it. When results can create events
// (closed-loop follow-ups, P/D decode routing), the bound falls back to the
// engine's next event.
//
// It knows instances only through their public API (Submit, the P/D hooks,
// snapshot reads and the KV cache's prefix index); never files, flags,
// workload specs or the wall clock. Routing decisions go to an io.Writer
// the caller provides; an Observer (the timeline) sees routing, refusals,
// KV transfers and every request each instance finishes.
//
// With a Fleet (docs/fleet.md), instances come and go during the run: node
// pools hold their GPUs and cost, replicas load, warm up and drain, and an
// autoscaler (its decisions in des/autoscale) adds and removes them at its
// ticks; the router's candidates are then the ready replicas only.
package cluster
