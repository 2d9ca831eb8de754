package httpload

import (
	"fmt"
	"iter"
	"math"
	"time"
)

// Pacer gives intended send times. It is a pure function of the request
// index, so pacing is tested without a clock.
type Pacer interface {
	// At is the intended send offset, µs from the origin, of request n
	// (0-based), and false when the pacer has no request n.
	At(n int64) (offsetUS int64, ok bool)
}

// Wait is how long to wait, elapsed after the origin with sent requests
// already sent, before sending the next one: max(0, At(sent) − elapsed).
// ok is false when the pacer has no further request.
func Wait(p Pacer, elapsed time.Duration, sent int64) (wait time.Duration, ok bool) {
	at, ok := p.At(sent)
	if !ok {
		return 0, false
	}
	w := time.Duration(at)*time.Microsecond - elapsed
	if w < 0 {
		w = 0
	}
	return w, true
}

// Schedule is a precomputed list of intended send offsets in µs,
// non-decreasing: a trace's arrival times (trace-driven load), or arrival
// times sampled by the workload generator (poisson, gamma, weibull, ...).
type Schedule []int64

// NewSchedule validates offsets (non-negative, non-decreasing) and returns
// them as a Schedule; the slice is not copied.
func NewSchedule(offsetsUS []int64) (Schedule, error) {
	for i, t := range offsetsUS {
		if t < 0 {
			return nil, fmt.Errorf("httpload: schedule: offset %d is negative (%d µs)", i, t)
		}
		if i > 0 && t < offsetsUS[i-1] {
			return nil, fmt.Errorf("httpload: schedule: offset %d (%d µs) is before offset %d (%d µs)", i, t, i-1, offsetsUS[i-1])
		}
	}
	return Schedule(offsetsUS), nil
}

// ScheduleFromIntervals accumulates inter-arrival times (µs, each ≥ 1):
// the first arrival is one interval after t = 0, as in the workload spec.
func ScheduleFromIntervals(intervalsUS []int64) (Schedule, error) {
	s := make(Schedule, len(intervalsUS))
	var t int64
	for i, d := range intervalsUS {
		if d < 1 {
			return nil, fmt.Errorf("httpload: schedule: interval %d is %d µs; must be ≥ 1", i, d)
		}
		if t > math.MaxInt64-d {
			return nil, fmt.Errorf("httpload: schedule: interval %d overflows int64 µs", i)
		}
		t += d
		s[i] = t
	}
	return s, nil
}

// At implements Pacer.
func (s Schedule) At(n int64) (int64, bool) {
	if n < 0 || n >= int64(len(s)) {
		return 0, false
	}
	return s[n], true
}

// Scaled replays the schedule speed times faster (speed > 1) or slower:
// offset / speed, rounded down, order kept.
func (s Schedule) Scaled(speed float64) (Schedule, error) {
	if !(speed > 0) || math.IsInf(speed, 0) {
		return nil, fmt.Errorf("httpload: schedule: speed %v must be finite and > 0", speed)
	}
	out := make(Schedule, len(s))
	for i, t := range s {
		out[i] = int64(math.Floor(float64(t) / speed))
	}
	return out, nil
}

// Pace sets the IntendedUS of the n-th job of jobs to p.At(n), stopping when
// either runs out: jobs give the content, the pacer the times.
func Pace(jobs iter.Seq[Job], p Pacer) iter.Seq[Job] {
	return func(yield func(Job) bool) {
		var n int64
		for j := range jobs {
			at, ok := p.At(n)
			if !ok {
				return
			}
			j.IntendedUS = at
			if !yield(j) {
				return
			}
			n++
		}
	}
}
