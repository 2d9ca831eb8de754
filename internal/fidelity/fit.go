package fidelity

import (
	"context"
	"errors"
	"math"
	"slices"

	"servesim/internal/fit"
	"servesim/internal/tracev2"
)

// FitOptions tune FitUniversal. The zero value is valid.
type FitOptions struct {
	Start      Universal // zero value: DefaultUniversal
	Iterations int       // fixed-point iterations (one replay of every run each); 0 = 8
	// Ridge pulls each coefficient towards its start, relative to its
	// column's scale, for directions the runs cannot tell apart; 0 = 1e-3.
	Ridge float64
}

// FitResult is a universal fit.
type FitResult struct {
	Universal  Universal
	Objective  float64    // of the chosen iterate (see Errors.Objective)
	Start      float64    // objective of the starting coefficients
	Iterations int        // replays of every run, the first included
	PerRun     []RunError // the chosen iterate's errors on each training run
}

// RunError is how far one replay is from its measurement.
type RunError struct {
	Run      string
	N        int     // requests compared
	TTFTMAPE float64 // fractions
	E2EMAPE  float64
	TPOTMean float64 // relative error of the mean TPOT
	// ByLoad are the TTFT and E2E MAPE over the requests of each load the
	// replay met (simRegimes), as calibrate fit pools them for its σ.
	ByLoad map[Regime]RegimeErrors
}

// Objective is the figure a fit minimises: the request-level MAPE of TTFT
// and E2E, and the error of the mean TPOT, equally weighted.
func (e RunError) Objective() float64 {
	return (e.TTFTMAPE + e.E2EMAPE + math.Abs(e.TPOTMean)) / 3
}

// FitUniversal fits the universal coefficients to the runs of cases (never
// to a run held out: the caller leaves it out of cases). The host and link
// terms enter every step's time linearly, so it runs internal/fit's
// fixed-point iteration (fit.Iterate): a replay of every run under the
// current coefficients, recording each step's basis and each request's place in
// the simulated timeline, with a non-negative least-squares solve of all
// requests' equations
//
//	TTFT − A_tok                     = Σ step times from queued to the first token
//	E2E − TTFT − (O−1)·A_tok − A_end = Σ step times from the first token to the last
//
// on relative error, where queued is the start of the step in flight when
// the request arrived ([recorder.queuedAt]). Each solve is pulled towards
// the iterate replayed, the step goes half way to it, and the iterate whose
// replays had the lowest objective is kept (fit.KeepBest). A_tok and A_end
// are held at their starting values.
func FitUniversal(ctx context.Context, cases []*Case, opts FitOptions) (*FitResult, error) {
	if len(cases) == 0 {
		return nil, errors.New("fidelity: fit: no runs")
	}
	start := opts.Start
	if start == (Universal{}) {
		start = DefaultUniversal()
	}
	l := fit.Loop{Iterations: opts.Iterations, Ridge: opts.Ridge, RidgeToCurrent: true, Damping: 0.5, Keep: fit.KeepBest,
		Lower: []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1), 1, math.Inf(-1)}} // LinkInv ≥ 1
	if l.Iterations <= 0 {
		l.Iterations = 8
	}
	if l.Ridge <= 0 {
		l.Ridge = 1e-3
	}
	out, err := fit.Iterate(ctx, l, start.vector(), func(ctx context.Context, _ int, theta []float64, _ bool) (fit.Pass[[]RunError], error) {
		return universalPass(ctx, cases, start.withVector(theta))
	})
	if err != nil {
		return nil, err
	}
	return &FitResult{Universal: start.withVector(out.Theta), Objective: out.Kept.Objective, Start: out.Start.Objective,
		Iterations: out.Passes, PerRun: out.Kept.Value}, nil
}

// universalPass replays every run under u and returns the mean of their
// objectives and the equations of all their requests.
func universalPass(ctx context.Context, cases []*Case, u Universal) (fit.Pass[[]RunError], error) {
	var p fit.Pass[[]RunError]
	a := make([]float64, nu)
	for _, c := range cases {
		rp, err := c.simulate(ctx, u)
		if err != nil {
			return p, err
		}
		e := runErrors(c.Run, rp.sims)
		e.ByLoad = errorsByClass(c.Run, rp.sims, simRegimes(c.Run, rp.rec.results))
		p.Value = append(p.Value, e)
		p.Objective += e.Objective() / float64(len(cases))
		rec := rp.rec
		for j := range c.Run.Records {
			m := &c.Run.Records[j]
			ttft, e2e, ok := measured(m)
			et, done := rec.results[m.RequestID]
			if !ok || !done || !et.completed || et.firstToken < 0 {
				continue
			}
			fix := rec.span(rec.queuedAt(et.arrival), et.firstToken, a)
			if y := ttft - u.TokenUs - fix; ttft > 0 {
				p.Equations = append(p.Equations, fit.Equation{X: slices.Clone(a), Y: y, W: 1 / (ttft * ttft)})
			}
			if dec := e2e - ttft; dec > 0 && et.done > et.firstToken {
				fix = rec.span(et.firstToken, et.done, a)
				y := dec - float64(max(et.output-1, 0))*u.TokenUs - u.EndUs - fix
				p.Equations = append(p.Equations, fit.Equation{X: slices.Clone(a), Y: y, W: 1 / (dec * dec)})
			}
		}
	}
	return p, nil
}

// measured returns a real row's TTFT and E2E (µs, from its send), or false
// when the row carries no usable latencies.
func measured(m *tracev2.Record) (ttft, e2e float64, ok bool) {
	if m.Status != "ok" || m.FirstChunkTimeUs <= 0 || m.LastChunkTimeUs < m.FirstChunkTimeUs || m.FirstChunkTimeUs < m.SendTimeUs {
		return 0, 0, false
	}
	return float64(m.FirstChunkTimeUs - m.SendTimeUs), float64(m.LastChunkTimeUs - m.SendTimeUs), true
}

// runErrors compares a replay with its run, as calibrate would (matching
// by request id), without building a whole report.
func runErrors(r *Run, sims []tracev2.SimResult) RunError {
	byID := make(map[int64]*tracev2.SimResult, len(sims))
	for i := range sims {
		byID[sims[i].RequestID] = &sims[i]
	}
	e := RunError{Run: r.Name}
	var rt, st float64
	var nt int
	for i := range r.Records {
		m := &r.Records[i]
		ttft, e2e, ok := measured(m)
		s := byID[m.RequestID]
		if !ok || s == nil {
			continue
		}
		e.N++
		if ttft > 0 {
			e.TTFTMAPE += math.Abs(float64(s.TTFTUs)-ttft) / ttft
		}
		e.E2EMAPE += math.Abs(float64(s.E2EUs)-e2e) / e2e
		if m.OutputTokens > 1 && s.OutputTokens > 1 {
			rt += (e2e - ttft) / float64(m.OutputTokens-1)
			st += float64(s.E2EUs-s.TTFTUs) / float64(s.OutputTokens-1)
			nt++
		}
	}
	if e.N > 0 {
		e.TTFTMAPE /= float64(e.N)
		e.E2EMAPE /= float64(e.N)
	}
	if rt > 0 {
		e.TPOTMean = (st - rt) / rt
	}
	return e
}
