package des

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTimeHeapOrder: random pushes and pops come out in time order, with
// every value that went in.
func TestTimeHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var h TimeHeap[int]
	var model []int64
	for op := 0; op < 5000; op++ {
		if rng.IntN(3) > 0 || len(model) == 0 {
			at := rng.Int64N(1000)
			h.Push(at, int(at)*7)
			model = append(model, at)
			continue
		}
		slices.Sort(model)
		e, ok := h.Min()
		if !ok || e.At != model[0] || e.V != int(e.At)*7 {
			t.Fatalf("op %d: min %+v (%v), want time %d", op, e, ok, model[0])
		}
		h.Pop()
		model = model[1:]
		if h.Len() != len(model) {
			t.Fatalf("op %d: %d entries, want %d", op, h.Len(), len(model))
		}
	}
	for len(model) > 0 {
		slices.Sort(model)
		if e, _ := h.Min(); e.At != model[0] {
			t.Fatalf("drain: min %d, want %d", e.At, model[0])
		}
		h.Pop()
		model = model[1:]
	}
	if _, ok := h.Min(); ok {
		t.Error("empty heap reports a minimum")
	}
}
