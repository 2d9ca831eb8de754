package fit

import (
	"context"
	"fmt"
	"math"
	"slices"

	"servesim/internal/deploy"
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
func equations(rec *recorder, sp *space, ts []target, cur, prior []float64, fixed []bool) []Equation {
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
	eqs        []Equation
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
	b.eqs = append(b.eqs, Equation{X: slices.Clone(x), Y: y, W: w / sigma2, Sigma: math.Sqrt(sigma2)})
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

// robustPasses is the number of reweighted solves after the first (see
// robustSolve).
const robustPasses = 4
