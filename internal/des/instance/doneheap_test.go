package instance

import (
	"container/heap"
	"math/rand/v2"
	"testing"
)

// boxed is doneHeap under container/heap, the order push and pop keep.
type boxed struct{ doneHeap }

func (h boxed) Len() int           { return len(h.doneHeap) }
func (h boxed) Less(i, j int) bool { return h.less(i, j) }
func (h boxed) Swap(i, j int)      { h.doneHeap[i], h.doneHeap[j] = h.doneHeap[j], h.doneHeap[i] }
func (h *boxed) Push(x any)        { h.doneHeap = append(h.doneHeap, x.(doneEntry)) }
func (h *boxed) Pop() any {
	x := h.doneHeap[len(h.doneHeap)-1]
	h.doneHeap = h.doneHeap[:len(h.doneHeap)-1]
	return x
}

// TestDoneHeapOrderIsContainerHeaps: entries come out of doneHeap in
// container/heap's order, ties (equal round and admission) included,
// under random pushes and pops.
func TestDoneHeapOrderIsContainerHeaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 200; trial++ {
		var h doneHeap
		var ref boxed
		for op := 0; op < 400; op++ {
			if len(h) > 0 && rng.IntN(3) == 0 {
				got, want := h.pop(), heap.Pop(&ref).(doneEntry)
				if got != want {
					t.Fatalf("trial %d op %d: popped %+v, container/heap %+v", trial, op, got, want)
				}
				continue
			}
			e := doneEntry{d: rng.Int64N(20), aseq: rng.Int64N(6), gen: uint32(op)}
			h.push(e)
			heap.Push(&ref, e)
		}
	}
}
