package live

import (
	"container/heap"
	"math"
)

// Bounds of reading a trace to play (observe --trace).
const (
	// maxPlayRows bounds the rows kept to be played (about 200 bytes
	// each): a longer trace is played a window at a time (--num-requests,
	// --duration, --trace-offset).
	maxPlayRows = 1 << 22
	// reorderSlackUs is how far out of time order a trace's rows may be
	// listed and still be played in order: observe writes a row when its
	// request ends, within its request timeout (5 minutes by default) of
	// its arrival. Reading stops at the first row that arrives this much
	// after the window's end.
	reorderSlackUs = int64(10 * 60 * 1e6)
)

// playWindow tells when reading a trace to play may stop: once a row
// arrives reorderSlackUs after the end of the window the player takes
// (the limit-th earliest row after the offset, or the duration's end),
// no row still to come can belong to the window. Times are the trace's
// arrival_time_us as written (one kind of time per column, whatever the
// origin). With neither a limit nor a duration the window never ends.
type playWindow struct {
	limit    int64 // rows to play; 0 = all
	spanUs   int64 // trace time the duration covers (duration / time scale); 0 = all
	offsetUs int64 // --trace-offset
	minUs    int64 // earliest arrival read
	seen     bool
	nearest  maxHeap // the limit earliest arrivals at or after the offset
}

func newPlayWindow(o playOptions) *playWindow {
	w := &playWindow{limit: o.limit, offsetUs: o.offset.Microseconds()}
	if o.horizonUs > 0 {
		w.spanUs = int64(min(math.Ceil(float64(o.horizonUs)/o.rule.TimeScale), math.MaxInt64/4))
	}
	return w
}

// past takes the next row's arrival and reports whether it lies beyond the
// window by more than the slack (reading can stop before it).
func (w *playWindow) past(arrivalUs int64) bool {
	if !w.seen || arrivalUs < w.minUs {
		w.minUs, w.seen = arrivalUs, true
	}
	start := w.minUs + w.offsetUs
	end, bounded := int64(math.MaxInt64), false
	if w.limit > 0 && int64(len(w.nearest)) >= w.limit {
		end, bounded = w.nearest[0], true
	}
	if w.spanUs > 0 {
		end, bounded = min(end, start+w.spanUs), true
	}
	if bounded && arrivalUs > end && arrivalUs-end > reorderSlackUs {
		return true
	}
	if w.limit > 0 && arrivalUs >= start {
		switch {
		case int64(len(w.nearest)) < w.limit:
			heap.Push(&w.nearest, arrivalUs)
		case arrivalUs < w.nearest[0]:
			w.nearest[0] = arrivalUs
			heap.Fix(&w.nearest, 0)
		}
	}
	return false
}

// maxHeap is a max-heap of times (container/heap).
type maxHeap []int64

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
