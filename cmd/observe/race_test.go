//go:build race

package main

// raceEnabled: the race detector slows every memory access several-fold, so
// sub-millisecond timing is not asserted under it.
const raceEnabled = true
