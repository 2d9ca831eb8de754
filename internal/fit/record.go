package fit

import (
	"sort"

	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

// recorder watches one replay: as the instance's latency model it logs every
// step's start, end and features; as a replay.Observer it learns the time of
// each event (a step starts at its Step event) and each request's result.
type recorder struct {
	inner latency.Model
	sp    *space
	now   int64

	start, end []int64   // per step, engine µs
	offset     []float64 // per step, µs no free parameter scales
	cumOff     []float64 // prefix sums of offset: cumOff[i] = Σ over steps < i
	cum        []float64 // prefix sums of features: cum[i*nb:(i+1)*nb] = Σ over steps < i
	buf        []float64

	results map[int64]simResult
}

// simResult is what the fit needs of one simulated request.
type simResult struct {
	completed              bool
	arrival, enqueue       int64
	firstToken, done       int64 // engine times of the first and last token's step ends
	ttft, e2e              int64 // as replay reports them (overheads included)
	prompt, output, preemp int
}

func newRecorder(inner latency.Model, sp *space, expect int) *recorder {
	r := &recorder{inner: inner, sp: sp, buf: make([]float64, sp.nb), results: make(map[int64]simResult, expect)}
	r.cum = make([]float64, sp.nb, 1024*sp.nb)
	r.cumOff = make([]float64, 1, 1024)
	return r
}

// StepTime implements latency.Model: the inner model's time, logged.
func (r *recorder) StepTime(s *latency.Step) int64 {
	d := r.inner.StepTime(s)
	off := r.sp.features(s, r.buf)
	base := len(r.cum) - r.sp.nb
	for j, f := range r.buf {
		r.cum = append(r.cum, r.cum[base+j]+f)
	}
	r.start = append(r.start, r.now)
	r.end = append(r.end, r.now+max(d, 1))
	r.offset = append(r.offset, off)
	r.cumOff = append(r.cumOff, r.cumOff[len(r.cumOff)-1]+off)
	return d
}

// QueueDelay, TokenOverhead and EndOverhead implement latency.Model.
func (r *recorder) QueueDelay(prompt int) int64 { return r.inner.QueueDelay(prompt) }
func (r *recorder) TokenOverhead() int64        { return r.inner.TokenOverhead() }
func (r *recorder) EndOverhead() int64          { return r.inner.EndOverhead() }

// The replay.Observer methods.
func (r *recorder) Scheduled(int64, *instance.Request, int) {}
func (r *recorder) Preempted(int64, *instance.Request)      {}
func (r *recorder) Left(int64, *instance.Request)           {}
func (r *recorder) Start(*instance.Instance)                {}
func (r *recorder) Event(atUs int64, _ int)                 { r.now = atUs }
func (r *recorder) Finish(int64) error                      { return nil }

func (r *recorder) Result(res *instance.Result, _ *instance.Request) {
	r.results[res.ID] = simResult{
		completed: res.Status == instance.StatusCompleted,
		arrival:   res.ArrivalUs, enqueue: res.EnqueueUs,
		firstToken: res.FirstTokenUs, done: res.DoneUs,
		ttft: res.TTFTUs, e2e: res.E2EUs,
		prompt: res.PromptTokens, output: res.OutputTokens, preemp: res.Preemptions,
	}
}

// steps returns the indices [lo, hi) of the steps that end in (from, to].
func (r *recorder) steps(from, to int64) (lo, hi int) {
	lo = sort.Search(len(r.end), func(i int) bool { return r.end[i] > from })
	hi = sort.Search(len(r.end), func(i int) bool { return r.end[i] > to })
	return lo, hi
}

// sum adds the features of steps [lo, hi), the first of them scaled by
// phi, into dst[:nb] and returns their offset, likewise scaled.
func (r *recorder) sum(lo, hi int, phi float64, dst []float64) float64 {
	nb := r.sp.nb
	clear(dst[:nb])
	if lo >= hi {
		return 0
	}
	off := 0.0
	first := lo
	if phi != 1 {
		for j := 0; j < nb; j++ {
			dst[j] = phi * (r.cum[(lo+1)*nb+j] - r.cum[lo*nb+j])
		}
		off = phi * r.offset[lo]
		first = lo + 1
	}
	for j := 0; j < nb; j++ {
		dst[j] += r.cum[hi*nb+j] - r.cum[first*nb+j]
	}
	return off + r.cumOff[hi] - r.cumOff[first]
}
