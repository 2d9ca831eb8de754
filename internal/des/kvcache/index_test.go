package kvcache

import "testing"

// TestIndexChurn: thousands of distinct prefixes pass through a 4-block
// cache; stale entries force rebuilds, yet the latest prefix is always found
// and no evicted one is.
func TestIndexChurn(t *testing.T) {
	c := mustNew(t, Config{Blocks: 4, BlockSize: 2})
	for i := 0; i < 3000; i++ {
		s := seqOf(8, int32(i*100))
		if _, ok := c.Admit(s, 0, 8); !ok {
			t.Fatalf("round %d: admit refused", i)
		}
		c.Release(s)
		if g, _ := c.Match(seqOf(8, int32(i*100)), 8); g != 4 {
			t.Fatalf("round %d: latest prefix matched %d blocks, want 4", i, g)
		}
		if i > 0 {
			if g, _ := c.Match(seqOf(8, int32((i-1)*100)), 8); g != 0 {
				t.Fatalf("round %d: evicted prefix matched %d blocks", i, g)
			}
		}
		if c.index.n > c.index.limit {
			t.Fatalf("round %d: index holds %d slots over its limit %d", i, c.index.n, c.index.limit)
		}
		if err := c.Check(); err != nil {
			t.Fatal(err)
		}
	}
}
