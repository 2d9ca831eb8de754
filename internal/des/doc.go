// Package des is the discrete-event engine of the simulator: an integer
// microsecond clock and a min-heap of events ordered by (time, priority,
// sequence), with cancellation.
//
// It is deliberately ignorant of LLM serving: it never knows what a request,
// a KV block or a batch is. The model lives in the subpackages (kvcache,
// instance, metrics, sim, ...), which schedule events here. The engine runs
// in one goroutine, never reads the wall clock and never allocates per event
// in steady state (event slots are recycled).
package des
