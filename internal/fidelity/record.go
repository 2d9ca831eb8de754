package fidelity

import (
	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
	"servesim/internal/fit"
)

// recorder watches one replay for the universal fit. As the instance's
// latency model it logs every step's universal basis, and the part of its
// time no universal term scales, in its fit.StepLog; as a replay.Observer
// (through the log) it learns each event's time and each request's engine
// times.
type recorder struct {
	*fit.StepLog
	inner *latency.KernelPhysics
	topo  Topology
	u     []float64 // the universal coefficients in force (vector form)
	buf   []float64

	results map[int64]engineTimes
}

// engineTimes is what the fit needs of one simulated request.
type engineTimes struct {
	enqueue, firstToken, done int64
	completed                 bool
	output                    int
}

const nu = 5 // universal terms fitted (universalNames)

func newRecorder(u Universal) *recorder {
	return &recorder{StepLog: fit.NewStepLog(nu, 0), u: u.vector(), buf: make([]float64, nu)}
}

// reset prepares the recorder for a replay with model km.
func (r *recorder) reset(km *latency.KernelPhysics, t Topology) {
	r.inner, r.topo = km, t
	r.Reset()
	r.results = map[int64]engineTimes{}
}

// StepTime implements latency.Model: the inner model's time, logged.
func (r *recorder) StepTime(s *latency.Step) int64 {
	d := r.inner.StepTime(s)
	b := r.inner.Basis(s)
	universalBasis(&b, r.topo, r.buf)
	scaled := 0.0
	for j, v := range r.buf {
		scaled += r.u[j] * v
	}
	r.Add(d, r.buf, float64(d)-scaled)
	return d
}

// QueueDelay, TokenOverhead and EndOverhead implement latency.Model.
func (r *recorder) QueueDelay(p int) int64 { return r.inner.QueueDelay(p) }
func (r *recorder) TokenOverhead() int64   { return r.inner.TokenOverhead() }
func (r *recorder) EndOverhead() int64     { return r.inner.EndOverhead() }

// Result implements replay.Observer.
func (r *recorder) Result(res *instance.Result, _ *instance.Request) {
	r.results[res.ID] = engineTimes{enqueue: res.EnqueueUs, firstToken: res.FirstTokenUs, done: res.DoneUs,
		completed: res.Status == instance.StatusCompleted, output: res.OutputTokens}
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
