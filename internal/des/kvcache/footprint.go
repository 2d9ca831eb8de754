package kvcache

import "unsafe"

// MaxBlocks is the largest number of GPU blocks a cache can hold (2³⁰ − 1:
// a free-list entry keeps two flag bits beside the block id).
const MaxBlocks = maxBlocks

// tableSize is the power of two, at least 16, that holds n entries: the
// size of the free ring (n = 2T) and of the prefix index (n = 4T).
func tableSize(n int) int {
	size := 16
	for size < n {
		size *= 2
	}
	return size
}

// Footprint is the memory in bytes that New allocates for a cache of
// blocks GPU blocks (1 ≤ blocks ≤ MaxBlocks), before any request: the
// per-block state, hashes and match-memo places (memo.go), the free ring (tableSize(2T) entries of an id
// and a serial) and the prefix index (tableSize(4T) slots). What grows with
// the run — sequences' block tables, the CPU tier — is not counted. A
// caller sizing many caches checks it against the memory it has before
// creating them.
func Footprint(blocks int) int64 {
	perBlock := int64(unsafe.Sizeof(block{}) + unsafe.Sizeof(Hash{}) + unsafe.Sizeof(int32(0)))
	ring := int64(tableSize(2*blocks)) * int64(unsafe.Sizeof(uint32(0))+unsafe.Sizeof(uint64(0)))
	index := int64(tableSize(4*blocks)) * int64(unsafe.Sizeof(indexSlot{}))
	return int64(blocks)*perBlock + ring + index
}
