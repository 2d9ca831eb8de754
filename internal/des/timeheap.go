package des

// TimeHeap is a min-heap of values keyed by a time in µs. Components that
// need the earliest of their own pending events (the engine's queue holds
// everyone's) keep one; ties come out in no particular order.
type TimeHeap[T any] struct{ s []Timed[T] }

// Timed is a value with its time.
type Timed[T any] struct {
	At int64
	V  T
}

// Len is the number of entries.
func (h *TimeHeap[T]) Len() int { return len(h.s) }

// Min is the entry with the earliest time; ok is false when the heap is empty.
func (h *TimeHeap[T]) Min() (e Timed[T], ok bool) {
	if len(h.s) == 0 {
		return e, false
	}
	return h.s[0], true
}

// Push adds v at time at.
func (h *TimeHeap[T]) Push(at int64, v T) {
	h.s = append(h.s, Timed[T]{At: at, V: v})
	s := h.s
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].At <= s[i].At {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// Pop removes the entry Min returns. The heap must not be empty.
func (h *TimeHeap[T]) Pop() {
	s := h.s
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l := 2*i + 1
		if l >= len(s) {
			break
		}
		m := l
		if r := l + 1; r < len(s) && s[r].At < s[l].At {
			m = r
		}
		if s[i].At <= s[m].At {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	h.s = s
}
