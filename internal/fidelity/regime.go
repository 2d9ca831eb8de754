package fidelity

import (
	"math"

	"servesim/internal/fit"
	"servesim/internal/tracev2"
)

// Regime is the load a request met when it reached the server, in
// calibrate fit's classes (fit.ClassifyLoad); the report classes every
// request from the measured run itself, never from the simulation.
type Regime = fit.Regime

// The load regimes (fit.Regimes).
const (
	RegimeLight     = fit.RegimeLight
	RegimeKnee      = fit.RegimeKnee
	RegimeSaturated = fit.RegimeSaturated
)

// Regimes lists the regimes, lightest first.
func Regimes() []Regime { return fit.Regimes() }

// regimes classifies every record of r by the load the real server showed
// at its send (by index; "" when the record carries no schedule or no
// send time).
func regimes(r *Run) []Regime {
	spans := make([]fit.Span, len(r.Records))
	for i := range r.Records {
		m := &r.Records[i]
		if i >= len(r.Scheduled) || r.Scheduled[i] <= 0 || m.SendTimeUs <= 0 || m.LastChunkTimeUs <= 0 {
			continue
		}
		spans[i] = fit.Span{Arrive: m.SendTimeUs, Sched: r.Scheduled[i], End: m.LastChunkTimeUs, OK: true}
	}
	return fit.ClassifyLoad(spans)
}

// RegimeErrors are the errors over one regime's requests (fractions).
type RegimeErrors struct {
	N        int
	TTFTMAPE float64
	E2EMAPE  float64
}

// regimeErrors computes each regime's TTFT and E2E MAPE over the matched
// requests of a replay (sims by request id), every request classed by the
// load the real server showed (regimes).
func regimeErrors(r *Run, sims []tracev2.SimResult) map[Regime]RegimeErrors {
	return errorsByClass(r, sims, regimes(r))
}

// simRegimes classifies every record of r by the load it met in a replay
// (fit.ClassifyLoad on the simulated engine times, as calibrate fit
// classes a trace's requests; "" for a request never scheduled).
func simRegimes(r *Run, results map[int64]engineTimes) []Regime {
	spans := make([]fit.Span, len(r.Records))
	for i := range r.Records {
		if et, ok := results[r.Records[i].RequestID]; ok {
			spans[i] = fit.SimSpan(et.arrival, et.firstSched, et.done, et.completed)
		}
	}
	return fit.ClassifyLoad(spans)
}

// errorsByClass computes each class's TTFT and E2E MAPE over the matched
// requests of a replay; classes are by record index ("" left out).
func errorsByClass(r *Run, sims []tracev2.SimResult, classes []Regime) map[Regime]RegimeErrors {
	byID := make(map[int64]*tracev2.SimResult, len(sims))
	for i := range sims {
		byID[sims[i].RequestID] = &sims[i]
	}
	out := map[Regime]RegimeErrors{}
	for i, g := range classes {
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
			if n == 0 {
				continue
			}
			p.TTFTMAPE = (p.TTFTMAPE*float64(p.N) + e.TTFTMAPE*float64(e.N)) / n
			p.E2EMAPE = (p.E2EMAPE*float64(p.N) + e.E2EMAPE*float64(e.N)) / n
			p.N += e.N
			out[g] = p
		}
	}
	return out
}
