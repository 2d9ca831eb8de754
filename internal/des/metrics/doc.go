// Package metrics turns the simulator's per-request results into the
// summary of docs/simulator.md §14: counts, latency means and percentiles,
// throughput, goodput and SLO attainment per class, per-tenant totals and
// Jain's fairness index, KV utilisation and cache hit rate.
//
// It consumes a stream of results (Aggregator.Add) and keeps only compact
// per-request latency values (a few int64 per completed request), never the
// requests. It knows nothing of events, batches or the KV cache beyond the
// totals handed to Summary.
package metrics
