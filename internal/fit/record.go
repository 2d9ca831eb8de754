package fit

import (
	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

// recorder watches one replay: as the instance's latency model it logs every
// step's features in its StepLog; as a replay.Observer (through the log) it
// learns the time of each event and each request's result.
type recorder struct {
	*StepLog
	inner latency.Model
	sp    *space
	buf   []float64

	results map[int64]simResult
}

// simResult is what the fit needs of one simulated request.
type simResult struct {
	completed              bool
	arrival, enqueue       int64
	sched                  int64 // first schedule; -1 if never scheduled
	firstToken, done       int64 // engine times of the first and last token's step ends
	ttft, e2e              int64 // as replay reports them (overheads included)
	prompt, output, preemp int
}

func newRecorder(inner latency.Model, sp *space, expect int) *recorder {
	return &recorder{StepLog: NewStepLog(sp.nb, 1023), inner: inner, sp: sp, buf: make([]float64, sp.nb),
		results: make(map[int64]simResult, expect)}
}

// StepTime implements latency.Model: the inner model's time, logged.
func (r *recorder) StepTime(s *latency.Step) int64 {
	d := r.inner.StepTime(s)
	off := r.sp.features(s, r.buf)
	r.Add(d, r.buf, off)
	return d
}

// QueueDelay, TokenOverhead and EndOverhead implement latency.Model.
func (r *recorder) QueueDelay(prompt int) int64 { return r.inner.QueueDelay(prompt) }
func (r *recorder) TokenOverhead() int64        { return r.inner.TokenOverhead() }
func (r *recorder) EndOverhead() int64          { return r.inner.EndOverhead() }

// Result implements replay.Observer.
func (r *recorder) Result(res *instance.Result, _ *instance.Request) {
	r.results[res.ID] = simResult{
		completed: res.Status == instance.StatusCompleted,
		arrival:   res.ArrivalUs, enqueue: res.EnqueueUs, sched: res.FirstScheduledUs,
		firstToken: res.FirstTokenUs, done: res.DoneUs,
		ttft: res.TTFTUs, e2e: res.E2EUs,
		prompt: res.PromptTokens, output: res.OutputTokens, preemp: res.Preemptions,
	}
}
