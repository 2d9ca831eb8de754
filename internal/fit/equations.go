package fit

import (
	"context"
	"fmt"
	"math"
	"slices"

	"servesim/internal/deploy"
	"servesim/internal/nnls"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// replayTrace runs the measured trace through the simulator of dep, the way
// `replay` does (injection at send time, every row whatever its status;
// with cfg.Replay.ClosedLoop, later session rounds at the simulated
// completion of the round before plus the think time, and with
// cfg.anchored not before their measured send time), with rec watching.
func replayTrace(ctx context.Context, cfg *Config, recs []tracev2.Record, dep *deploy.Resolved, rec *recorder) error {
	tr, err := replay.NewTrace(replay.RecordRows(recs), cfg.Replay)
	if err != nil {
		return fmt.Errorf("fit: %w", err)
	}
	defer tr.Close()
	fu := tr.FollowUps()
	if cfg.anchored && fu != nil {
		fu = &anchoredFollowUps{inner: fu, shift: originShift(recs, cfg.Replay)}
	}
	_, err = replay.Simulate(ctx, replay.Config{Deploy: dep, Seed: cfg.Seed, ContextGrowth: cfg.ContextGrowth, Client: cfg.Client, Observer: rec},
		tr, fu, nil)
	if err != nil {
		return fmt.Errorf("fit: replay: %w", err)
	}
	return tr.Close()
}

// anchoredFollowUps is the closed loop of the replays that give the
// equations: a later session round arrives at the later of its measured
// send time and the simulated completion of the round before plus the
// think time. Injecting every row at its measured time instead lets a
// replay a little slower than the server start a user's next round while
// its last one still runs, which no closed loop does: at four users on four
// slots with no think time the fifth request queues, the queue cascades
// (TTFT MAPE 71 % at the start of a measured Ollama run) and the next solve
// sees batches that never were. A plain closed loop drifts off the measured
// timeline whenever the replay is faster. The later of the two does
// neither.
type anchoredFollowUps struct {
	inner replay.FollowUps
	shift int64 // the replay's shift of a trace starting before its origin
}

func (a *anchoredFollowUps) anchor(nxt *tracev2.Record, ok bool) (*tracev2.Record, bool) {
	if ok && nxt.SendTimeUs > 0 {
		if at := nxt.SendTimeUs + a.shift; at > nxt.ArrivalTimeUs {
			if nxt.DeadlineUs > 0 {
				nxt.DeadlineUs = at + max(0, nxt.DeadlineUs-nxt.ArrivalTimeUs)
			}
			nxt.ArrivalTimeUs = at
		}
	}
	return nxt, ok
}

// OnComplete and OnFailed implement replay.FollowUps.
func (a *anchoredFollowUps) OnComplete(rec *tracev2.Record, doneUs int64, generated int) (*tracev2.Record, bool) {
	return a.anchor(a.inner.OnComplete(rec, doneUs, generated))
}

func (a *anchoredFollowUps) OnFailed(rec *tracev2.Record, atUs int64, timedOut bool) (*tracev2.Record, bool) {
	return a.anchor(a.inner.OnFailed(rec, atUs, timedOut))
}

// Refused passes a refused follow-up on to the trace (a replay with a
// horizon; fit sets none).
func (a *anchoredFollowUps) Refused(rec *tracev2.Record) {
	if r, ok := a.inner.(interface{ Refused(*tracev2.Record) }); ok {
		r.Refused(rec)
	}
}

// originShift is the shift replay.NewTrace gives a trace whose injection
// times start before its origin.
func originShift(recs []tracev2.Record, opts replay.TraceOptions) int64 {
	low := int64(0)
	for i := range recs {
		r := &recs[i]
		if opts.SkipFailed && r.Status != "ok" {
			continue
		}
		at := r.ArrivalTimeUs
		if !opts.InjectAtArrival && r.SendTimeUs > 0 {
			at = r.SendTimeUs
		}
		low = min(low, at)
	}
	return -low
}

// relNoise is the relative error assumed of every measured time when
// weighting equations against the phase variance.
const relNoise = 0.02

// itlSegment is the length, in tokens, of the decode segments fitted from
// ITL data.
const itlSegment = 32

// equations builds the equations of doc.go from one recorded replay (the
// fixed parameters at their prior moved to the known side).
func equations(rec *recorder, sp *space, ts []target, cur, prior []float64, fixed []bool) []equation {
	b := &eqBuilder{rec: rec, sp: sp, cur: cur, prior: prior, fixed: fixed, x: make([]float64, sp.params())}
	for i := range ts {
		t := &ts[i]
		if t.holdout {
			continue
		}
		s, ok := rec.results[t.id]
		if !ok || !s.completed || s.firstToken < 0 {
			continue
		}
		b.ttft(t, &s)
		if t.output < 2 || s.output != t.output {
			continue
		}
		b.decode(t, &s)
	}
	return b.eqs
}

// eqBuilder collects the equations of one recorded replay.
type eqBuilder struct {
	rec        *recorder
	sp         *space
	cur, prior []float64
	fixed      []bool
	x          []float64 // the equation being built
	eqs        []equation
}

// add accumulates x·θ + off ≈ y with weight w/σ², σ² = (ε·ŷ)² + v:
// a relative error of the equation's own prediction ŷ at the current θ
// (not of the measured y, whose noise would otherwise pick the weights:
// short measured TTFTs are short partly by chance), plus v, the variance
// of what a replay cannot know (the phase of the step a request arrives
// in).
func (b *eqBuilder) add(y, off, w, v float64) {
	x := b.x
	pred := off
	for j, xv := range x {
		pred += xv * b.cur[j]
	}
	if !(pred > 0) {
		pred = y
	}
	y -= off
	for j, f := range b.fixed {
		if f { // a fixed parameter is a known part of the time
			y -= x[j] * b.prior[j]
			x[j] = 0
		}
	}
	if !(y > 0) || !(pred > 0) {
		return
	}
	sigma2 := relNoise*relNoise*pred*pred + v
	b.eqs = append(b.eqs, equation{x: slices.Clone(x), y: y, w: w / sigma2, sigma: math.Sqrt(sigma2)})
}

// ttft adds the TTFT equation: Q(r) + φ·Δ(s₀) + Σ Δ + A_tok, from enqueue
// to the first token.
func (b *eqBuilder) ttft(t *target, s *simResult) {
	rec, x := b.rec, b.x
	lo, hi := rec.Steps(s.enqueue, s.firstToken)
	if lo >= hi {
		return
	}
	// A request that arrives while a step runs waits for its end.
	// Where in that step it arrived is a matter of phase, which a
	// replay with other coefficients does not reproduce: the real
	// wait is half a step on average, whatever the replay's phase
	// (taking the replay's own would bias the fit towards zero).
	//
	// A request a capped client held back is different: it was
	// sent when another one ended, at a step's end, so it reached
	// the server a known time into the next step (the client's
	// send gap, then Q), in the replay as on the server; its
	// phase is the replay's own.
	phi, v := 1.0, 0.0
	if st, en := rec.start[lo], rec.end[lo]; st < s.enqueue {
		d := float64(en - st)
		phi, v = 0.5, d*d/12 // uniform phase
		if t.held {
			phi, v = float64(en-s.enqueue)/d, 0
		}
	}
	off := rec.Sum(lo, hi, phi, x)
	// Anything between arrival and enqueue other than Q (admission
	// or routing latency) is known time.
	off += float64(max(s.enqueue-s.arrival-rec.inner.QueueDelay(s.prompt), 0))
	b.sp.ttftAlpha(s.prompt, x)
	b.add(t.ttft, off, 1, v)
}

// decode adds the decode equations: Σ Δ + (O − 1)·A_tok + A_end, from the
// first token to the last; by segments when the ITL data allow.
func (b *eqBuilder) decode(t *target, s *simResult) {
	rec, x, sp := b.rec, b.x, b.sp
	lo, hi := rec.Steps(s.firstToken, s.done)
	if t.chunks != nil && hi-lo == t.output-1 && t.output > 2*itlSegment {
		b.segments(t, lo)
		return
	}
	off := rec.Sum(lo, hi, 1, x)
	sp.decodeAlpha(t.output, x)
	b.add(t.decode, off, 1, 0)
}

// segments adds the decode of a request with one step per token, split by
// its ITL data into segments of itlSegment tokens, each the sum of its
// steps plus A_tok per token (A_end rides on the last). Segments, not
// single intervals: a replay's steps sit up to one step off the real ones,
// which would blur single intervals to nothing. lo is the first decode
// step.
func (b *eqBuilder) segments(t *target, lo int) {
	rec, x, sp := b.rec, b.x, b.sp
	nseg := (t.output - 1) / itlSegment
	for g := 0; g < nseg; g++ {
		a, e := g*itlSegment, (g+1)*itlSegment // token intervals [a, e)
		if g == nseg-1 {
			e = t.output - 1
		}
		end := t.chunks[e]
		if g == nseg-1 {
			// The last segment runs to the last chunk, as E2E
			// does: A_end covers what follows the last token.
			end = t.lastChunk
		}
		y := float64(end - t.chunks[a])
		off := rec.Sum(lo+a, lo+e, 1, x)
		sp.decodeAlpha(e-a+1, x)
		if g < nseg-1 {
			x[sp.nb+1] = 0
		}
		b.add(y, off, float64(e-a)/float64(t.output-1), 0)
	}
}

// solveEquations returns the least-squares coefficients of the equations of
// every trace (reweighted: see robustSolve) and their RMS relative residual
// at the solution.
func solveEquations(eqs []equation, params int, prior []float64, ridge float64) ([]float64, float64, error) {
	theta, err := robustSolve(eqs, params, prior, ridge)
	if err != nil {
		return nil, 0, fmt.Errorf("fit: %w", err)
	}
	var sq float64
	for i := range eqs {
		r := (eqs[i].at(theta) - eqs[i].y) / eqs[i].y
		sq += r * r
	}
	return theta, math.Sqrt(sq / float64(len(eqs))), nil
}

// equation is x·θ ≈ y with weight w = weight/σ², σ its standard error.
type equation struct {
	x           []float64
	y, w, sigma float64
}

func (e *equation) at(theta []float64) float64 {
	v := 0.0
	for j, xv := range e.x {
		v += xv * theta[j]
	}
	return v
}

// robustPasses is the number of reweighted solves after the first.
const robustPasses = 4

// robustSolve fits the equations by iteratively reweighted least squares
// towards least absolute standardised residuals: after a plain solve, each
// equation's weight is divided by its |residual|/σ where that exceeds 1
// (Huber's weights at one σ). calibrate grades MAPE, an L1 measure of
// relative error, and measured times carry stalls — a busy machine adds tens
// of milliseconds to a few requests — which least squares would chase.
func robustSolve(eqs []equation, p int, prior []float64, ridge float64) ([]float64, error) {
	robust := make([]float64, len(eqs))
	for i := range robust {
		robust[i] = 1
	}
	var theta []float64
	for pass := 0; pass <= robustPasses; pass++ {
		ne, err := nnls.New(p)
		if err != nil {
			return nil, err
		}
		for i := range eqs {
			ne.Add(eqs[i].x, eqs[i].y, eqs[i].w*robust[i])
		}
		if theta, err = ne.Solve(nnls.Options{Prior: prior, Ridge: ridge}); err != nil {
			return nil, fmt.Errorf("fit: %w", err)
		}
		for i := range eqs {
			z := math.Abs(eqs[i].at(theta)-eqs[i].y) / eqs[i].sigma
			robust[i] = 1 / max(z, 1)
		}
	}
	return theta, nil
}
