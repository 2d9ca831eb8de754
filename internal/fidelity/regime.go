package fidelity

import (
	"math"
	"slices"

	"servesim/internal/tracev2"
)

// Regime is the load a request met when it reached the real server.
type Regime string

// The load regimes, from the measured run itself (never the simulation):
// a request arriving while others wait for their first schedule queues
// behind them (saturated); one that finds no queue but a batch at least
// half as large as the run's largest finds the server near its knee; the
// rest meet a light load.
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

// regimes classifies every record of r (by index; "" when the record
// carries no schedule or no send time). Waiting at time t counts the
// requests sent and not yet scheduled, running those scheduled and not yet
// finished, each at the request's own send excluded.
func regimes(r *Run) []Regime {
	out := make([]Regime, len(r.Records))
	var sends, scheds, lasts []int64
	for i := range r.Records {
		m := &r.Records[i]
		if i >= len(r.Scheduled) || r.Scheduled[i] <= 0 || m.SendTimeUs <= 0 || m.LastChunkTimeUs <= 0 {
			continue
		}
		sends = append(sends, m.SendTimeUs)
		scheds = append(scheds, r.Scheduled[i])
		lasts = append(lasts, m.LastChunkTimeUs)
	}
	slices.Sort(sends)
	slices.Sort(scheds)
	slices.Sort(lasts)
	atOrBefore := func(xs []int64, t int64) int {
		n, _ := slices.BinarySearch(xs, t+1)
		return n
	}
	before := func(xs []int64, t int64) int {
		n, _ := slices.BinarySearch(xs, t)
		return n
	}
	// Peak batch: the most requests scheduled and not finished at once.
	peak := 0
	for _, t := range scheds {
		peak = max(peak, atOrBefore(scheds, t)-atOrBefore(lasts, t))
	}
	for i := range r.Records {
		m := &r.Records[i]
		if i >= len(r.Scheduled) || r.Scheduled[i] <= 0 || m.SendTimeUs <= 0 || m.LastChunkTimeUs <= 0 {
			continue
		}
		t := m.SendTimeUs
		waiting := before(sends, t) - before(scheds, t)
		running := before(scheds, t) - before(lasts, t)
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

// RegimeErrors are the errors over one regime's requests (fractions).
type RegimeErrors struct {
	N        int
	TTFTMAPE float64
	E2EMAPE  float64
}

// regimeErrors computes each regime's TTFT and E2E MAPE over the matched
// requests of a replay (sims by request id).
func regimeErrors(r *Run, sims []tracev2.SimResult) map[Regime]RegimeErrors {
	byID := make(map[int64]*tracev2.SimResult, len(sims))
	for i := range sims {
		byID[sims[i].RequestID] = &sims[i]
	}
	out := map[Regime]RegimeErrors{}
	for i, g := range regimes(r) {
		m := &r.Records[i]
		ttft, e2e, ok := measured(m)
		s := byID[m.RequestID]
		if g == "" || !ok || s == nil || ttft <= 0 || e2e <= 0 {
			continue
		}
		e := out[g]
		e.N++
		e.TTFTMAPE += math.Abs(s.TTFTUs-ttft) / ttft
		e.E2EMAPE += math.Abs(s.E2EUs-e2e) / e2e
		out[g] = e
	}
	for g, e := range out {
		e.TTFTMAPE /= float64(e.N)
		e.E2EMAPE /= float64(e.N)
		out[g] = e
	}
	return out
}

// pooledRegimes pools every run's regime errors (each request weighs the
// same).
func pooledRegimes(runs []map[Regime]RegimeErrors) map[Regime]RegimeErrors {
	out := map[Regime]RegimeErrors{}
	for _, run := range runs {
		for g, e := range run {
			p := out[g]
			n := float64(p.N + e.N)
			p.TTFTMAPE = (p.TTFTMAPE*float64(p.N) + e.TTFTMAPE*float64(e.N)) / n
			p.E2EMAPE = (p.E2EMAPE*float64(p.N) + e.E2EMAPE*float64(e.N)) / n
			p.N += e.N
			out[g] = p
		}
	}
	return out
}
