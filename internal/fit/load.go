package fit

import "slices"

// Regime is the load a request met when it arrived.
type Regime string

// The load regimes: a request arriving while others wait for their first
// schedule queues behind them (saturated); one that finds no queue but a
// batch at least half as large as the run's largest finds the server near
// its knee; the rest meet a light load.
const (
	RegimeLight     Regime = "light"
	RegimeKnee      Regime = "knee"
	RegimeSaturated Regime = "saturated"
)

// Regimes lists the regimes, lightest first.
func Regimes() []Regime { return []Regime{RegimeLight, RegimeKnee, RegimeSaturated} }

// kneeShare: a batch at least this share of the run's peak batch is near
// the knee.
const kneeShare = 0.5

// Span is one request's life on a server, in µs of one clock: its arrival,
// its first schedule and its end. OK false leaves it out (it is neither
// classed nor counted); an End of 0 or less counts it as still running.
type Span struct {
	Arrive, Sched, End int64
	OK                 bool
}

// SimSpan is a simulated request's span: one never scheduled is left out
// (sched < 0), one not completed counts as running to the end.
func SimSpan(arrive, sched, done int64, completed bool) Span {
	if !completed {
		done = 0
	}
	return Span{Arrive: arrive, Sched: sched, End: done, OK: sched >= 0}
}

// ClassifyLoad classes every span by the load it met at its arrival
// (Regimes; "" for a span not OK). Waiting at time t counts the requests
// arrived and not yet scheduled, running those scheduled and not yet
// ended, each at the request's own arrival excluded.
func ClassifyLoad(spans []Span) []Regime {
	out := make([]Regime, len(spans))
	var arrives, scheds, ends []int64
	for _, s := range spans {
		if !s.OK {
			continue
		}
		arrives = append(arrives, s.Arrive)
		scheds = append(scheds, s.Sched)
		if s.End > 0 {
			ends = append(ends, s.End)
		}
	}
	slices.Sort(arrives)
	slices.Sort(scheds)
	slices.Sort(ends)
	atOrBefore := func(xs []int64, t int64) int {
		n, _ := slices.BinarySearch(xs, t+1)
		return n
	}
	before := func(xs []int64, t int64) int {
		n, _ := slices.BinarySearch(xs, t)
		return n
	}
	// Peak batch: the most requests scheduled and not ended at once.
	peak := 0
	for _, t := range scheds {
		peak = max(peak, atOrBefore(scheds, t)-atOrBefore(ends, t))
	}
	for i, s := range spans {
		if !s.OK {
			continue
		}
		waiting := before(arrives, s.Arrive) - before(scheds, s.Arrive)
		running := before(scheds, s.Arrive) - before(ends, s.Arrive)
		switch {
		case waiting > 0:
			out[i] = RegimeSaturated
		case float64(running) >= kneeShare*float64(peak):
			out[i] = RegimeKnee
		default:
			out[i] = RegimeLight
		}
	}
	return out
}
