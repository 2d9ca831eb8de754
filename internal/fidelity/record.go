package fidelity

import (
	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
	"servesim/internal/fit"
)

// recorder watches one replay. As the instance's latency model it logs
// every step's universal basis, and the part of its time no universal term
// scales, in its fit.StepLog; as a replay.Observer (through the log) it
// learns each event's time and each request's engine times. The fit uses
// all of it; the evaluation uses the step log to count each request's times
// from the step in flight when it was queued (see [Case]).
type recorder struct {
	*fit.StepLog
	inner *latency.Physics
	// step gives the step times the replay runs: inner, or inner scaled
	// for one end of an interval (latency.NewScaled).
	step latency.Model
	u    []float64 // the universal coefficients in force (vector form)
	buf  []float64

	results  map[int64]engineTimes
	maxBatch int // most requests in one step
}

// engineTimes is what the fit and the breakdown need of one simulated
// request (engine µs).
type engineTimes struct {
	arrival, firstSched, firstToken, done int64
	completed                             bool
	output                                int
}

const nu = 5 // universal terms fitted (universalNames)

func newRecorder(u Universal) *recorder {
	return &recorder{StepLog: fit.NewStepLog(nu, 0), u: u.vector(), buf: make([]float64, nu)}
}

// reset prepares the recorder for a replay with model km, its step
// times × scale (1: as they are).
func (r *recorder) reset(km *latency.Physics, scale float64) error {
	step, err := latency.NewScaled(km, scale)
	if err != nil {
		return err
	}
	r.inner, r.step = km, step
	r.Reset()
	r.results = map[int64]engineTimes{}
	r.maxBatch = 0
	return nil
}

// StepTime implements latency.Model: the (scaled) inner model's time,
// logged.
func (r *recorder) StepTime(s *latency.Step) int64 {
	d := r.step.StepTime(s)
	q := r.inner.Quantities(s)
	universalBasis(&q, r.inner.LaunchBound(&q), r.buf)
	scaled := 0.0
	for j, v := range r.buf {
		scaled += r.u[j] * v
	}
	r.Add(d, r.buf, float64(d)-scaled)
	r.maxBatch = max(r.maxBatch, s.DecodeCount+len(s.Prefill))
	return d
}

// QueueDelay, TokenOverhead and EndOverhead implement latency.Model.
func (r *recorder) QueueDelay(p int) int64 { return r.inner.QueueDelay(p) }
func (r *recorder) TokenOverhead() int64   { return r.inner.TokenOverhead() }
func (r *recorder) EndOverhead() int64     { return r.inner.EndOverhead() }

// Result implements replay.Observer.
func (r *recorder) Result(res *instance.Result, _ *instance.Request) {
	r.results[res.ID] = engineTimes{arrival: res.ArrivalUs, firstSched: res.FirstScheduledUs, firstToken: res.FirstTokenUs,
		done: res.DoneUs, completed: res.Status == instance.StatusCompleted, output: res.OutputTokens}
}

// queuedAt is where a request that arrived at t is queued in vLLM's terms:
// the end of the step in flight at t, or t when the engine was idle.
// vLLM reads new requests between steps and stamps queued_ts there, while
// the next step (formed asynchronously) already runs; the replay injects at
// that stamp, which falls anywhere in a simulated step, so counting from
// the simulated step's end lines the two clocks up. The simulator's own
// asynchronous scheduling keeps the request out of the step after that one
// too, as vLLM does.
func (r *recorder) queuedAt(t int64) int64 {
	lo, _ := r.Steps(t, t)
	if lo < r.Len() && r.StartUs(lo) < t {
		return r.EndUs(lo)
	}
	return t
}

// scheduledAt is a request's first schedule in vLLM's terms: with
// asynchronous scheduling a batch is formed when the step before it starts,
// so a request whose first step (starting at first) follows another step
// without a gap was scheduled when that step started; not before queued.
func (r *recorder) scheduledAt(first, queued int64) int64 {
	lo, _ := r.Steps(first-1, first-1)
	if lo < r.Len() && r.EndUs(lo) == first && r.StartUs(lo) >= queued {
		return r.StartUs(lo)
	}
	return max(first, queued)
}

// span returns the universal basis (into dst) and the fixed time of the
// steps that end in (from, to], the first of them counted from `from` only
// (its share of the step still to run when the request joined).
func (r *recorder) span(from, to int64, dst []float64) float64 {
	lo, hi := r.Steps(from, to)
	phi := 1.0
	if lo < hi {
		if s, e := r.StartUs(lo), r.EndUs(lo); s < from {
			phi = float64(e-from) / float64(e-s)
		}
	}
	return r.Sum(lo, hi, phi, dst)
}
