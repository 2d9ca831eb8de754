package kvcache

import (
	"math/rand/v2"
	"testing"
)

// TestHashIndexMatchesMap drives random puts and deletes, with keys crowded
// into few home slots so probe runs wrap and shift.
func TestHashIndexMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 9))
	x := newHashIndex(8) // 16 slots
	ref := map[Hash]int32{}
	var keys []Hash
	for op := 0; op < 20000; op++ {
		if len(ref) < 8 && rng.IntN(2) == 0 {
			h := Hash{Lo: uint64(rng.IntN(5)) + uint64(rng.IntN(4))*16, Hi: rng.Uint64()}
			if _, ok := ref[h]; ok {
				continue
			}
			v := int32(rng.IntN(100))
			x.put(h, v)
			ref[h] = v
			keys = append(keys, h)
		} else if len(keys) > 0 {
			i := rng.IntN(len(keys))
			x.del(keys[i])
			delete(ref, keys[i])
			keys = append(keys[:i], keys[i+1:]...)
		}
		for _, k := range keys {
			if v, ok := x.get(k); !ok || v != ref[k] {
				t.Fatalf("op %d: get(%v) = %d %v, want %d", op, k, v, ok, ref[k])
			}
		}
		if x.len() != len(ref) {
			t.Fatalf("len %d, want %d", x.len(), len(ref))
		}
	}
}
