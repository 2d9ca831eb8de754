package live

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"servesim/internal/httpload"
)

// errOverSaturated stops a sweep level whose server fell behind for good.
var errOverSaturated = errors.New("over-saturated")

// saturation watches an open-loop level for a queue growing without bound:
// the requests sent but not finished (the backlog) and the requests
// finished, sampled every period. A server that keeps up holds its backlog
// steady around rate × latency, after a ramp that lasts one latency, in
// which the backlog grows and the completions rise from 0 to the rate. A
// level is stopped only when, over the last satSteps samples, its
// completions no longer rise (they came at the same pace over the
// satSteps samples before, none of them 0) and yet its backlog grew at
// every sample, by more than it completed, by at least satGrowth of the
// level's rate, to at least satMinBacklog: the server completes at its
// limit, clearly fewer requests than arrive. A nil *saturation watches
// nothing.
type saturation struct {
	rate   float64 // the level's arrival rate, requests/s
	period time.Duration

	sent, done atomic.Int64

	mu  sync.Mutex
	why string
}

const (
	satSteps      = 3
	satGrowth     = 0.1
	satMinBacklog = 16
	satRise       = 1.25 // completions rising by more than this factor (plus one) are still ramping up
)

// satSample is one sample of a level's requests.
type satSample struct {
	backlog int64 // sent, not finished
	done    int64 // finished so far
}

// newSaturation watches a level at rate requests/s lasting about dur.
func newSaturation(rate float64, dur time.Duration) *saturation {
	return &saturation{rate: rate, period: min(max(dur/15, 20*time.Millisecond), time.Second)}
}

// count wraps a plan's jobs to count the requests handed to the dispatcher.
func (m *saturation) count(jobs iter.Seq[httpload.Job]) iter.Seq[httpload.Job] {
	if m == nil {
		return jobs
	}
	return func(yield func(httpload.Job) bool) {
		for j := range jobs {
			m.sent.Add(1)
			if !yield(j) {
				return
			}
		}
	}
}

// finished counts a finished request (from the sink).
func (m *saturation) finished() {
	if m != nil {
		m.done.Add(1)
	}
}

// reason is why the level was stopped, "" when it was not.
func (m *saturation) reason() string {
	if m == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.why
}

// run samples the backlog until ctx ends, and stops the run with
// errOverSaturated when it grows without bound.
func (m *saturation) run(ctx context.Context, t0 time.Time, stop context.CancelCauseFunc, log *slog.Logger) {
	if m == nil {
		return
	}
	select { // a --start-at in the future: sample from t0 on
	case <-time.After(time.Until(t0)):
	case <-ctx.Done():
		return
	}
	tick := time.NewTicker(m.period)
	defer tick.Stop()
	var samples []satSample
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// The dispatcher takes a job before waiting for its time: one
		// counted job may not be sent yet.
		done := m.done.Load()
		samples = append(samples, satSample{backlog: max(m.sent.Load()-1-done, 0), done: done})
		if why, ok := m.overSaturated(samples); ok {
			m.mu.Lock()
			m.why = why
			m.mu.Unlock()
			log.Warn("the server is over-saturated: stopping this level early", "why", why)
			stop(errOverSaturated)
			return
		}
	}
}

// overSaturated judges the samples (pure: tested without a clock).
func (m *saturation) overSaturated(s []satSample) (string, bool) {
	n, k := len(s), satSteps
	if n <= 2*k || s[n-1].backlog < satMinBacklog {
		return "", false
	}
	for i := n - k; i < n; i++ {
		if s[i].backlog <= s[i-1].backlog {
			return "", false
		}
	}
	grown := s[n-1].backlog - s[n-1-k].backlog
	completed := s[n-1].done - s[n-1-k].done
	before := s[n-1-k].done - s[n-1-2*k].done
	if before == 0 || float64(completed) > satRise*float64(before)+1 || grown <= completed {
		return "", false // still ramping up, or completing as fast as the queue grows
	}
	span := time.Duration(k) * m.period
	growth := float64(grown) / span.Seconds()
	if growth < satGrowth*m.rate {
		return "", false
	}
	return fmt.Sprintf("%d requests behind and growing by %.1f/s while completing %.1f/s at %.1f req/s offered (%d samples %v apart)",
		s[n-1].backlog, growth, float64(completed)/span.Seconds(), m.rate, k+1, m.period), true
}
