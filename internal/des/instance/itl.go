package instance

import (
	"cmp"
	"slices"
)

// stepLog keeps the step times of one instance so that ITL samples need not
// be stored per token. A request that produces tokens in consecutive steps
// s..e has samples Δ_s + A_tok, ..., Δ_e + A_tok: it records the span (s, e)
// only. Samples that are not one step's Δ (after a preemption or a step in
// which the request got no tokens) are kept explicitly; they are rare.
//
// ITL distributions use the samples of completed requests only (docs/simulator.md §14):
// when a request completes its spans are added to a difference array over
// step indices, and steps that no live request still references are folded
// into a histogram (value → count). Memory is O(distinct step times + steps
// since the oldest live span), not O(tokens).
type stepLog struct {
	aTok   int64
	base   int64   // step index of prefix[0]
	next   int64   // index of the next step
	prefix []int64 // prefix[i] = Σ Δ of steps base .. base+i−1
	diff   []int32 // difference array of completed requests' span coverage
	hist   map[int64]int64
	foldAt int
}

func (l *stepLog) init(aTok int64) {
	l.aTok = aTok
	l.prefix = make([]int64, 1, 1024)
	l.diff = make([]int32, 1, 1024)
	l.hist = make(map[int64]int64)
	l.foldAt = 1 << 16
}

// add appends a step of length delta and returns its index.
func (l *stepLog) add(delta int64) int64 {
	idx := l.next
	l.next++
	l.prefix = append(l.prefix, l.prefix[len(l.prefix)-1]+delta)
	l.diff = append(l.diff, 0)
	return idx
}

// sum is Σ Δ over steps s..e inclusive.
func (l *stepLog) sum(s, e int64) int64 { return l.prefix[e+1-l.base] - l.prefix[s-l.base] }

// consecutive records a sample of r at step idx equal to Δ_idx + A_tok.
func (l *stepLog) consecutive(r *Request, idx int64) {
	l.extend(r, idx, idx)
}

// extend records samples of r at steps s..e (one per step, all consecutive
// with r's previous token).
func (l *stepLog) extend(r *Request, s, e int64) {
	if !(r.spanOpen && r.spanEnd == s-1) {
		l.closeSpan(r)
		r.spanOpen = true
		r.spanStart = s
	}
	r.spanEnd = e
	r.itlSum += l.sum(s, e) + (e-s+1)*l.aTok
	r.itlCount += int(e - s + 1)
}

// explicitSample records a sample v (A_tok included) of r.
func (l *stepLog) explicitSample(r *Request, v int64) {
	r.explicit = append(r.explicit, v)
	r.itlSum += v
	r.itlCount++
}

func (l *stepLog) closeSpan(r *Request) {
	if r.spanOpen {
		r.spans = append(r.spans, span{r.spanStart, r.spanEnd})
		r.spanOpen = false
	}
}

// flush adds a completed request's samples to the distribution.
func (l *stepLog) flush(r *Request) {
	if r.spanOpen {
		l.diff[r.spanStart-l.base]++
		l.diff[r.spanEnd+1-l.base]--
		r.spanOpen = false
	}
	for _, sp := range r.spans {
		l.diff[sp.s-l.base]++
		l.diff[sp.e+1-l.base]--
	}
	for _, v := range r.explicit {
		l.hist[v]++
	}
}

// oldestRef is the first step index r's samples reference, or -1.
func oldestRef(r *Request) int64 {
	if len(r.spans) > 0 {
		return r.spans[0].s
	}
	if r.spanOpen {
		return r.spanStart
	}
	if r.lazy {
		return r.dIdx
	}
	return -1
}

// fold moves steps before upTo (which no live request references) into the
// histogram and drops them.
func (l *stepLog) fold(upTo int64) {
	n := int(upTo - l.base)
	if n <= 0 {
		return
	}
	var c int64
	for i := 0; i < n; i++ {
		c += int64(l.diff[i])
		if c > 0 {
			l.hist[l.prefix[i+1]-l.prefix[i]+l.aTok] += c
		}
	}
	l.diff[n] += int32(c)
	// In place: a light load folds often, and new arrays each time were
	// most of a replay's allocations.
	l.prefix = l.prefix[:copy(l.prefix, l.prefix[n:])]
	l.diff = l.diff[:copy(l.diff, l.diff[n:])]
	l.base = upTo
}

// maybeFold folds when the log has grown past its threshold.
func (in *Instance) maybeFold() {
	l := &in.log
	if len(l.prefix) < l.foldAt {
		return
	}
	l.fold(in.minLiveRef())
	l.foldAt = max(1<<16, 2*len(l.prefix))
}

// ValueCount is one bin of an exact histogram.
type ValueCount struct {
	Value int64
	Count int64
}

// ITLHistogram returns every ITL sample of the requests completed so far
// (A_tok included), as sorted (value µs, count) pairs.
func (in *Instance) ITLHistogram() []ValueCount {
	in.log.fold(in.minLiveRef())
	out := make([]ValueCount, 0, len(in.log.hist))
	for v, c := range in.log.hist {
		out = append(out, ValueCount{v, c})
	}
	slices.SortFunc(out, func(a, b ValueCount) int { return cmp.Compare(a.Value, b.Value) })
	return out
}

func (in *Instance) minLiveRef() int64 {
	upTo := in.log.next
	for _, r := range in.running {
		if o := oldestRef(r); o >= 0 && o < upTo {
			upTo = o
		}
	}
	for _, r := range in.wait.items() {
		if o := oldestRef(r); o >= 0 && o < upTo {
			upTo = o
		}
	}
	return upTo
}
