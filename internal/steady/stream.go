package steady

import "math"

// streamBuckets is the resolution of a Stream: its times fall into this
// many buckets of equal width from the first arrival it was given to the
// latest time.
const streamBuckets = 2048

// Stream is Check for a run too long to keep every request's times: it
// takes them one request at a time, in any order, and keeps a histogram
// of bounded size (about 100 KB) instead. Each bucket holds the count of
// its times and their exact sum, so the queue integrals of Check are exact
// for every bucket that lies wholly on one side of a window's bound; only
// the few buckets that straddle a bound count their times at their mean.
// The error is below the bucket width times their count: with arrivals
// spread over the window, a millionth of n in the queue averages, far
// inside Check's bound of max(1% of n, √n).
//
// Times are µs on any common origin, given in any order: the buckets
// shift and widen to cover every time seen. The zero Stream is ready to
// use.
type Stream struct {
	width    int64 // µs per bucket, a power of two; 0 before the first time
	origin   int64 // the start of the first bucket
	last     int64 // the latest time given
	arrivals []bucket
	starts   []bucket // first scheduled, of the requests served
	n        int64
	t0, t1   int64 // first and last arrival
}

// bucket is the count of the times in [origin + i·width, origin +
// (i+1)·width) and the sum of their offsets from the bucket's start.
type bucket struct {
	count, offsets int64
}

// Add counts one request: its arrival and the time it left the queue
// (start < 0: never served), as Check takes them.
func (s *Stream) Add(arrival, start int64) {
	if s.n == 0 {
		s.t0, s.t1, s.origin, s.last = arrival, arrival, arrival, arrival
	}
	s.n++
	s.t0, s.t1 = min(s.t0, arrival), max(s.t1, arrival)
	s.put(&s.arrivals, arrival)
	if start >= 0 {
		s.put(&s.starts, start)
	}
}

func (s *Stream) put(h *[]bucket, t int64) {
	if s.width == 0 {
		s.width = 1
		s.arrivals, s.starts = make([]bucket, streamBuckets), make([]bucket, streamBuckets)
	}
	for t < s.origin { // shift the buckets right to make room before the first
		k := (s.origin - t + s.width - 1) / s.width
		if (s.last-s.origin)/s.width+k >= streamBuckets {
			s.widen()
			continue
		}
		for _, g := range [][]bucket{s.arrivals, s.starts} {
			copy(g[k:], g[:streamBuckets-k])
			clear(g[:k])
		}
		s.origin -= k * s.width
	}
	s.last = max(s.last, t)
	d := t - s.origin
	for d/s.width >= streamBuckets {
		s.widen()
	}
	b := &(*h)[d/s.width]
	b.count++
	b.offsets += d % s.width
}

// widen doubles the bucket width, merging neighbours.
func (s *Stream) widen() {
	for _, h := range [][]bucket{s.arrivals, s.starts} {
		for j := range streamBuckets / 2 {
			lo, hi := h[2*j], h[2*j+1]
			h[j] = bucket{count: lo.count + hi.count, offsets: lo.offsets + hi.offsets + hi.count*s.width}
		}
		clear(h[streamBuckets/2:])
	}
	s.width *= 2
}

// Verdict is the outcome of the test over the requests added.
func (s *Stream) Verdict() Verdict {
	if s.n < MinRequests || s.t1 <= s.t0 {
		return Verdict{Steady: true}
	}
	w := quarterWindows(s.t0, s.t1)
	var qq, ql, n2 float64
	for i := range streamBuckets {
		lo := float64(s.origin + int64(i)*s.width)
		if a := s.arrivals[i]; a.count > 0 {
			c, mean := float64(a.count), lo+float64(a.offsets)/float64(a.count)
			qq += c * area(mean, w.qa, w.qb)
			ql += c * area(mean, w.qc, w.qd)
			n2 += c * above(lo, lo+float64(s.width), w.qb)
		}
		if d := s.starts[i]; d.count > 0 {
			c, mean := float64(d.count), lo+float64(d.offsets)/float64(d.count)
			qq -= c * area(mean, w.qa, w.qb)
			ql -= c * area(mean, w.qc, w.qd)
		}
	}
	return w.verdict(qq, ql, n2)
}

// above is the share of a bucket [lo, hi) later than t, its times taken
// as spread evenly.
func above(lo, hi, t float64) float64 {
	return math.Min(1, math.Max(0, (hi-math.Max(lo, t))/(hi-lo)))
}
