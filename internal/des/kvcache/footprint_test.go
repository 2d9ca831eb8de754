package kvcache

import (
	"math"
	"runtime"
	"testing"
)

// TestFootprint: Footprint is what New allocates, within 5 % (the Cache
// struct and the pool are not counted; a size class may round up).
// TotalAlloc counts every goroutine's allocations, the package's parallel
// tests' too, so the least of five measurements is New's own.
func TestFootprint(t *testing.T) {
	for _, blocks := range []int{1000, 15909, 100_000, 1 << 20} {
		got := int64(math.MaxInt64)
		for range 5 {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			c, err := New(Config{Blocks: blocks, BlockSize: 16})
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(c)
			got = min(got, int64(after.TotalAlloc-before.TotalAlloc))
		}
		want := Footprint(blocks)
		if got < want || float64(got) > 1.05*float64(want) {
			t.Errorf("blocks %d: New allocated %d bytes, Footprint says %d", blocks, got, want)
		}
	}
}
