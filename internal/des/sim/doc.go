// Package sim drives one simulated instance from a streamed request source:
// it pulls requests lazily (one pending arrival at a time, so memory stays
// flat in the number of requests), lets a caller inject follow-up requests
// (sessions), streams every result to a sink as it happens, and returns the
// run-level totals for the metrics summary.
//
// It knows the engine, the instance and the result stream; never files,
// flags, workload specs or routing between instances (the cluster does that).
package sim
