package fit

import (
	"context"
	"fmt"

	"servesim/internal/deploy"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// replayTrace runs the measured trace through the simulator of dep, the way
// `replay` does (injection at send time, every row whatever its status;
// with cfg.Replay.ClosedLoop, later session rounds at the simulated
// completion of the round before plus the think time), with rec watching.
func replayTrace(ctx context.Context, cfg *Config, recs []tracev2.Record, dep *deploy.Resolved, rec *recorder) error {
	tr, err := replay.NewTrace(replay.RecordRows(recs), cfg.Replay)
	if err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	defer tr.Close()
	_, err = replay.Simulate(ctx, replay.Config{Deploy: dep, Seed: cfg.Seed, ContextGrowth: cfg.ContextGrowth, Observer: rec},
		tr, tr.FollowUps(), nil)
	if err != nil {
		return fmt.Errorf("fit: replay: %w", err)
	}
	return tr.Close()
}

// relNoise is the relative error assumed of every measured time when
// weighting equations against the phase variance.
const relNoise = 0.02

// itlSegment is the length, in tokens, of the decode segments fitted from
// ITL data.
const itlSegment = 32

// solve builds the equations of doc.go from one recorded replay and returns
// the least-squares coefficients (the fixed ones at their prior), the number of equations and their RMS
// relative residual at the solution.
func solve(rec *recorder, sp *space, ts []target, cur, prior []float64, fixed []bool, ridge float64) ([]float64, int, float64, error) {
	p := sp.params()
	ne := newNormal(p)
	x := make([]float64, p)
	rows := 0
	// add accumulates x·θ + off ≈ y with weight w/σ², σ² = (ε·ŷ)² + v:
	// a relative error of the equation's own prediction ŷ at the current θ
	// (not of the measured y, whose noise would otherwise pick the weights:
	// short measured TTFTs are short partly by chance), plus v, the variance
	// of what a replay cannot know (the phase of the step a request arrives
	// in).
	add := func(y, off, w, v float64) {
		pred := off
		for j, xv := range x {
			pred += xv * cur[j]
		}
		if !(pred > 0) {
			pred = y
		}
		y -= off
		for j, f := range fixed {
			if f { // a fixed parameter is a known part of the time
				y -= x[j] * prior[j]
				x[j] = 0
			}
		}
		if !(y > 0) || !(pred > 0) {
			return
		}
		sigma2 := relNoise*relNoise*pred*pred + v
		ne.add(x, y, w/sigma2)
		rows++
	}
	for i := range ts {
		t := &ts[i]
		if t.holdout {
			continue
		}
		s, ok := rec.results[t.id]
		if !ok || !s.completed || s.firstToken < 0 {
			continue
		}
		// TTFT: Q(r) + φ·Δ(s₀) + Σ Δ + A_tok, from enqueue to the first token.
		lo, hi := rec.Steps(s.enqueue, s.firstToken)
		if lo < hi {
			// A request that arrives while a step runs waits for its end.
			// Where in that step it arrived is a matter of phase, which a
			// replay with other coefficients does not reproduce: the real
			// wait is half a step on average, whatever the replay's phase
			// (taking the replay's own would bias the fit towards zero).
			phi, v := 1.0, 0.0
			if rec.start[lo] < s.enqueue {
				d := float64(rec.end[lo] - rec.start[lo])
				phi, v = 0.5, d*d/12 // uniform phase
			}
			off := rec.Sum(lo, hi, phi, x)
			// Anything between arrival and enqueue other than Q (admission
			// or routing latency) is known time.
			off += float64(max(s.enqueue-s.arrival-rec.inner.QueueDelay(s.prompt), 0))
			sp.ttftAlpha(s.prompt, x)
			add(t.ttft, off, 1, v)
		}
		if t.output < 2 || s.output != t.output {
			continue
		}
		// Decode: Σ Δ + (O − 1)·A_tok + A_end, from the first token to the last.
		lo, hi = rec.Steps(s.firstToken, s.done)
		if t.chunks != nil && hi-lo == t.output-1 && t.output > 2*itlSegment {
			// One step per token: the ITL data split the decode into
			// segments of itlSegment tokens, each the sum of its steps plus
			// A_tok per token (A_end rides on the last). Segments, not
			// single intervals: a replay's steps sit up to one step off the
			// real ones, which would blur single intervals to nothing.
			nseg := (t.output - 1) / itlSegment
			for g := 0; g < nseg; g++ {
				a, b := g*itlSegment, (g+1)*itlSegment // token intervals [a, b)
				if g == nseg-1 {
					b = t.output - 1
				}
				end := t.chunks[b]
				if g == nseg-1 {
					// The last segment runs to the last chunk, as E2E
					// does: A_end covers what follows the last token.
					end = t.lastChunk
				}
				y := float64(end - t.chunks[a])
				off := rec.Sum(lo+a, lo+b, 1, x)
				sp.decodeAlpha(b-a+1, x)
				if g < nseg-1 {
					x[sp.nb+1] = 0
				}
				add(y, off, float64(b-a)/float64(t.output-1), 0)
			}
			continue
		}
		off := rec.Sum(lo, hi, 1, x)
		sp.decodeAlpha(t.output, x)
		add(t.decode, off, 1, 0)
	}
	if rows == 0 {
		return prior, 0, 0, nil
	}
	theta, err := ne.solveNNLS(prior, ridge)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("fit: %w", err)
	}
	return theta, rows, ne.rmsRelative(theta), nil
}
