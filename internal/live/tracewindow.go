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
	// minSlackUs is the least time past the window's end that is read
	// before reading stops (see playWindow.slackUs).
	minSlackUs = int64(30 * 1e6)
)

// playWindow tells when reading a trace to play may stop: once a row
// arrives well after the end of the window the player takes (the
// limit-th earliest row after the offset, or the duration's end), no row
// still to come is expected to belong to the window. A trace lists its
// rows in about time order (observe writes a row when its request ends,
// so rows are out of arrival order by up to a request's latency): the
// slack read past the window's end is twice the most any row came after
// a later-arriving one so far, and at least minSlackUs. Times are the
// trace's arrival_time_us as written (one kind of time per column,
// whatever the origin). With neither a limit nor a duration the window
// never ends.
type playWindow struct {
	limit    int64 // rows to play; 0 = all
	spanUs   int64 // trace time the duration covers (duration / time scale); 0 = all
	offsetUs int64 // --trace-offset
	minUs    int64 // earliest arrival read
	maxUs    int64 // latest arrival read
	disorder int64 // most a row arrived before one listed earlier
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
	if !w.seen {
		w.minUs, w.maxUs, w.seen = arrivalUs, arrivalUs, true
	}
	w.minUs, w.maxUs = min(w.minUs, arrivalUs), max(w.maxUs, arrivalUs)
	w.disorder = max(w.disorder, w.maxUs-arrivalUs)
	start := w.minUs + w.offsetUs
	end, bounded := int64(math.MaxInt64), false
	if w.limit > 0 && int64(len(w.nearest)) >= w.limit {
		end, bounded = w.nearest[0], true
	}
	if w.spanUs > 0 {
		end, bounded = min(end, start+w.spanUs), true
	}
	if bounded && arrivalUs > end && arrivalUs-end > w.slackUs() {
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

// slackUs is how far past the window's end reading goes on.
func (w *playWindow) slackUs() int64 {
	return max(minSlackUs, 2*min(w.disorder, math.MaxInt64/4))
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
