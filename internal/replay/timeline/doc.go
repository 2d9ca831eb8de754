// Package timeline exports a simulation as a Chrome trace-event JSON file,
// the format ui.perfetto.dev and chrome://tracing open.
//
// Each instance is a process (pid = instance index, named with its index,
// its P/D pool and its KV cache): a track of batch steps (batch size and
// token counts in their arguments), counter tracks of KV cache use and
// batch occupancy, and per request a nested slice — queued, prefill,
// decode, and after a preemption waiting again and recompute; a P/D
// decode part starts with its KV transfer, a prefill part has category
// "prefill_part". A cluster adds a router process (pid = number of
// instances): an instant per routing decision, one per rejection or drop,
// and an async slice per P/D KV transfer.
//
// A Recorder is a replay.Observer, and a cluster.Observer for clusters: it
// sees each instance's observational events (Scheduled, Preempted, Left)
// and steps (the step hook), every engine event before it runs, the
// cluster's routing and transfers, and every request an instance finishes.
// A step's slice is written at the next engine event, when its effects are
// final. It only reads simulator state, never changes it, and writes as it
// goes, so memory stays flat in the length of the run.
//
// It knows the simulator's instances, never files, flags, traces or
// metrics; the caller owns the io.Writer.
package timeline
