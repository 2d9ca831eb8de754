package fidelity

import (
	"sort"

	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

// recorder watches one replay for the universal fit. As the instance's
// latency model it logs every step's start, end and universal basis (and
// the part of its time no universal term scales); as a replay.Observer it
// learns each event's time and each request's engine times.
type recorder struct {
	inner *latency.KernelPhysics
	topo  Topology
	u     []float64 // the universal coefficients in force (vector form)
	now   int64

	end    []int64   // per step, engine µs
	start  []int64   // per step
	fixed  []float64 // per step: time no universal term scales, µs
	cum    []float64 // prefix sums of the universal basis, nu per step
	cumFix []float64 // prefix sums of fixed
	buf    []float64

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
	return &recorder{u: u.vector(), buf: make([]float64, nu)}
}

// reset prepares the recorder for a replay with model km.
func (r *recorder) reset(km *latency.KernelPhysics, t Topology) {
	r.inner, r.topo, r.now = km, t, 0
	r.end, r.start, r.fixed = r.end[:0], r.start[:0], r.fixed[:0]
	r.cum = append(r.cum[:0], make([]float64, nu)...)
	r.cumFix = append(r.cumFix[:0], 0)
	r.results = map[int64]engineTimes{}
}

// StepTime implements latency.Model: the inner model's time, logged.
func (r *recorder) StepTime(s *latency.Step) int64 {
	d := r.inner.StepTime(s)
	b := r.inner.Basis(s)
	universalBasis(&b, r.topo, r.buf)
	scaled := 0.0
	base := len(r.cum) - nu
	for j, v := range r.buf {
		scaled += r.u[j] * v
		r.cum = append(r.cum, r.cum[base+j]+v)
	}
	r.start = append(r.start, r.now)
	r.end = append(r.end, r.now+max(d, 1))
	f := float64(d) - scaled
	r.fixed = append(r.fixed, f)
	r.cumFix = append(r.cumFix, r.cumFix[len(r.cumFix)-1]+f)
	return d
}

// QueueDelay, TokenOverhead and EndOverhead implement latency.Model.
func (r *recorder) QueueDelay(p int) int64 { return r.inner.QueueDelay(p) }
func (r *recorder) TokenOverhead() int64   { return r.inner.TokenOverhead() }
func (r *recorder) EndOverhead() int64     { return r.inner.EndOverhead() }

// The replay.Observer methods.
func (r *recorder) Scheduled(int64, *instance.Request, int) {}
func (r *recorder) Preempted(int64, *instance.Request)      {}
func (r *recorder) Left(int64, *instance.Request)           {}
func (r *recorder) Start(*instance.Instance)                {}
func (r *recorder) Event(atUs int64, _ int)                 { r.now = atUs }
func (r *recorder) Finish(int64) error                      { return nil }

func (r *recorder) Result(res *instance.Result, _ *instance.Request) {
	r.results[res.ID] = engineTimes{enqueue: res.EnqueueUs, firstToken: res.FirstTokenUs, done: res.DoneUs,
		completed: res.Status == instance.StatusCompleted, output: res.OutputTokens}
}

// span returns the universal basis (into dst) and the fixed time of the
// steps that end in (from, to], the first of them counted from `from` only
// (its share of the step still to run when the request joined).
func (r *recorder) span(from, to int64, dst []float64) float64 {
	clear(dst)
	lo := sort.Search(len(r.end), func(i int) bool { return r.end[i] > from })
	hi := sort.Search(len(r.end), func(i int) bool { return r.end[i] > to })
	if lo >= hi {
		return 0
	}
	first := lo
	fixed := 0.0
	if s := r.start[lo]; s < from {
		phi := float64(r.end[lo]-from) / float64(r.end[lo]-s)
		for j := 0; j < nu; j++ {
			dst[j] = phi * (r.cum[(lo+1)*nu+j] - r.cum[lo*nu+j])
		}
		fixed = phi * r.fixed[lo]
		first = lo + 1
	}
	for j := 0; j < nu; j++ {
		dst[j] += r.cum[hi*nu+j] - r.cum[first*nu+j]
	}
	return fixed + r.cumFix[hi] - r.cumFix[first]
}
