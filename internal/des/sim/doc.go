// Package sim drives one simulated instance from a streamed request source:
// it pulls requests lazily (one pending arrival at a time, so memory stays
// flat in the number of requests), lets a caller inject follow-up requests
// (sessions), streams every result to a sink as it happens, and returns the
// run-level totals for the metrics summary (Collect also serves a cluster).
//
// With one instance, always-admit and zero admission and routing latency,
// the spec's Arrival, Admission, Routing and InstanceArrival events of a
// request all happen at its arrival tick, so one Arrival event submits it.
// A source request's Arrival is scheduled when its predecessor's fires: an
// injected request arriving at the very same microsecond as a source request
// may run first. run and replay share this driver, so they agree.
//
// It knows the engine, the instance and the result stream; never files,
// flags, workload specs or routing between instances (the cluster does that).
package sim
