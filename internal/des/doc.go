// Package des is the discrete-event engine of the simulator: an integer
// microsecond clock and a min-heap of events ordered by (time, priority,
// sub-priority, sequence), with cancellation. The sub-priority is 0 unless
// the scheduler says otherwise (a cluster passes the instance index, so at
// equal time and priority lower instances go first).
//
// It is deliberately ignorant of LLM serving: it never knows what a request,
// a KV block or a batch is. The model lives in the subpackages (kvcache,
// instance, metrics, sim, ...), which schedule events here. The engine runs
// in one goroutine, never reads the wall clock and never allocates per event
// in steady state (event slots are recycled).
package des
