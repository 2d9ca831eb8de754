package kvcache

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFreeRingIsLRU drives the free ring with random releases, prefix hits
// (unlinks from anywhere) and evictions (head pops), and compares it after
// every operation with a plain ordered list: the head is always the least
// recently released free block, the free count matches, and Check's free
// list verification passes, through many compactions.
func TestFreeRingIsLRU(t *testing.T) {
	compactions := 0
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		const T = 37
		c, err := New(Config{Blocks: T, BlockSize: 4})
		if err != nil {
			t.Fatal(err)
		}
		model := make([]int32, T) // free blocks, least recently released first
		for i := range model {
			model[i] = int32(i)
		}
		held := []int32{}
		for op := 0; op < 5000; op++ {
			switch k := rng.IntN(20); {
			case k == 0 && len(model) > 0: // evict the head (rarely, so stale entries pile up)
				i := int32(c.freeHead() & freeID)
				if i != model[0] {
					t.Fatalf("seed %d op %d: head %d, want %d", seed, op, i, model[0])
				}
				c.unlink(i)
				c.blocks[i].ref = 1
				model = model[1:]
				held = append(held, i)
			case k < 10 && len(model) > 0: // a prefix hit takes any free block
				j := rng.IntN(len(model))
				i := model[j]
				c.unlink(i)
				c.blocks[i].ref = 1
				model = slices.Delete(model, j, j+1)
				held = append(held, i)
			case len(held) > 0: // release
				j := rng.IntN(len(held))
				i := held[j]
				held = slices.Delete(held, j, j+1)
				c.blocks[i].ref = 0
				if c.ring.ft-c.ring.fh == uint64(len(c.ring.ids)) {
					compactions++
				}
				c.pushTail(i, 0)
				model = append(model, i)
			}
			if c.FreeBlocks() != len(model) {
				t.Fatalf("seed %d op %d: %d free, want %d", seed, op, c.FreeBlocks(), len(model))
			}
			if _, err := c.checkFree(); err != nil {
				t.Fatalf("seed %d op %d: %v", seed, op, err)
			}
		}
	}
	if compactions < 10 {
		t.Errorf("the ring compacted %d times; the test does not cover compaction", compactions)
	}
}
