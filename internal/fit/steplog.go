package fit

import (
	"sort"

	"servesim/internal/des/instance"
)

// StepLog logs every step of one replay: its start and end (engine µs), a
// vector of nb basis terms and an offset (the µs no basis term scales), with
// prefix sums so that the terms of any run of steps add up in O(nb). Both
// fits over replays (this package's, and the held-out evaluation's
// universal fit) attribute each request's latency to the steps it spent in
// through it.
//
// It carries the replay.Observer methods a step log needs: Event moves its
// clock to the event's time (a step starts at its Step event) and the others
// do nothing, so a recorder that embeds it adds only Result and the
// latency.Model methods, whose StepTime calls Add.
type StepLog struct {
	nb  int
	now int64

	start, end []int64   // per step, engine µs
	offset     []float64 // per step, µs no basis term scales
	cumOff     []float64 // prefix sums of offset: cumOff[i] = Σ over steps < i
	cum        []float64 // prefix sums of the basis: cum[i*nb:(i+1)*nb] = Σ over steps < i
}

// NewStepLog returns an empty log of nb basis terms, with room for about
// expect steps.
func NewStepLog(nb, expect int) *StepLog {
	l := &StepLog{nb: nb}
	l.cum = make([]float64, nb, (expect+1)*nb)
	l.cumOff = make([]float64, 1, expect+1)
	return l
}

// Reset empties the log for another replay, keeping its memory.
func (l *StepLog) Reset() {
	l.now = 0
	l.start, l.end, l.offset = l.start[:0], l.end[:0], l.offset[:0]
	l.cum = append(l.cum[:0], make([]float64, l.nb)...)
	l.cumOff = append(l.cumOff[:0], 0)
}

// Add logs a step that starts at the current event and lasts d µs (at
// least 1), with its basis terms (nb of them) and offset.
func (l *StepLog) Add(d int64, basis []float64, offset float64) {
	base := len(l.cum) - l.nb
	for j, f := range basis[:l.nb] {
		l.cum = append(l.cum, l.cum[base+j]+f)
	}
	l.start = append(l.start, l.now)
	l.end = append(l.end, l.now+max(d, 1))
	l.offset = append(l.offset, offset)
	l.cumOff = append(l.cumOff, l.cumOff[len(l.cumOff)-1]+offset)
}

// Len is the number of steps logged.
func (l *StepLog) Len() int { return len(l.start) }

// StartUs and EndUs are step i's start and end, engine µs.
func (l *StepLog) StartUs(i int) int64 { return l.start[i] }
func (l *StepLog) EndUs(i int) int64   { return l.end[i] }

// Steps returns the indices [lo, hi) of the steps that end in (from, to].
func (l *StepLog) Steps(from, to int64) (lo, hi int) {
	lo = sort.Search(len(l.end), func(i int) bool { return l.end[i] > from })
	hi = sort.Search(len(l.end), func(i int) bool { return l.end[i] > to })
	return lo, hi
}

// Sum adds the basis terms of steps [lo, hi), the first of them scaled by
// phi, into dst[:nb] (cleared first) and returns their offset, likewise
// scaled.
func (l *StepLog) Sum(lo, hi int, phi float64, dst []float64) float64 {
	nb := l.nb
	clear(dst[:nb])
	if lo >= hi {
		return 0
	}
	off := 0.0
	first := lo
	if phi != 1 {
		for j := 0; j < nb; j++ {
			dst[j] = phi * (l.cum[(lo+1)*nb+j] - l.cum[lo*nb+j])
		}
		off = phi * l.offset[lo]
		first = lo + 1
	}
	for j := 0; j < nb; j++ {
		dst[j] += l.cum[hi*nb+j] - l.cum[first*nb+j]
	}
	return off + l.cumOff[hi] - l.cumOff[first]
}

// The replay.Observer methods other than Result. The log is its own
// instance.Tracer, one that does nothing.
func (l *StepLog) Scheduled(int64, *instance.Request, int)   {}
func (l *StepLog) Preempted(int64, *instance.Request)        {}
func (l *StepLog) Left(int64, *instance.Request)             {}
func (l *StepLog) Tracer(int) instance.Tracer                { return l }
func (l *StepLog) Step(int, int64, int64, instance.StepInfo) {}
func (l *StepLog) Start([]*instance.Instance, []string)      {}
func (l *StepLog) Event(atUs int64, _ int)                   { l.now = atUs }
func (l *StepLog) Finish(int64) error                        { return nil }
