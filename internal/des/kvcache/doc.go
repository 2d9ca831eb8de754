// Package kvcache is the paged KV cache of one simulated vLLM instance
// (docs/simulator.md §6): T blocks of b tokens with reference counts, prefix
// caching by chained block hashes, an LRU free list with lazy eviction,
// transactional (all-or-nothing) allocation, and an optional CPU tier that
// mirrors full blocks and reloads them at a cost.
//
// It knows token ids and blocks, never requests' timing, batches, latency
// models or scheduling policy: the instance decides what to allocate and when.
//
// Block hashes are 128-bit (two 64-bit lanes of multiply-xor mixing, chained
// through the previous block's hash; see HashBlock). The spec asks for a
// 256-bit cryptographic hash only to make collisions impossible in practice;
// 128 bits keep the collision probability below 2⁻⁶⁴ for any realistic number
// of blocks while costing a few nanoseconds per block instead of a SHA-256.
// Bit equality with BLIS's hashes is not a goal.
//
// A sequence may declare the tokens past a position its own (Seq.Private):
// blocks there could only ever be hit by the same sequence after a
// preemption, so they are neither hashed nor indexed, keep no shared block
// state, and are found again through the block table the sequence last
// held (private.go). Results are identical either way when the declaration
// is true; in a workload without shared prefixes it halves the cost of a
// simulation, and more in a cluster.
//
// The sequence matched last keeps its match up to date as the cache
// changes (memo.go), so that a request waiting at the head of the queue,
// matched again at every step, costs what changed rather than its
// prompt's length; a caller whose prompts begin with blocks that names fix
// (a trace's hash ids) hands over those names (Seq.Known, Region) instead
// of ids to hash.
package kvcache
