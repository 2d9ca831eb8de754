//go:build race

package timingtest

// RaceEnabled: the race detector slows every memory access several-fold, so
// sub-millisecond timing is not asserted under it.
const RaceEnabled = true
