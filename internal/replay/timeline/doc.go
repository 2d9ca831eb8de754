// Package timeline exports a simulation as a Chrome trace-event JSON file,
// the format ui.perfetto.dev and chrome://tracing open: per instance, a
// track of batch steps (batch size and token counts in their arguments),
// counter tracks of KV cache use and batch occupancy, and per request a
// nested slice — queued, prefill, decode, and after a preemption waiting
// again and recompute.
//
// A Recorder is a replay.Observer: it sees the instance's observational
// events (Scheduled, Preempted, Left), every engine event before it runs,
// and every result. Steps are found from the engine's Step events and the
// instance's counters; per-step token counts from the progress of the
// requests in the batch. It only reads simulator state, never changes it,
// and writes as it goes, so memory stays flat in the length of the run.
//
// It knows the simulator's instance and engine priorities, never files,
// flags, traces or metrics; the caller owns the io.Writer.
package timeline
