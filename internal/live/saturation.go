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
// the requests sent but not finished (the backlog) sampled every period;
// when it has grown at each of the last satSteps samples, by at least
// satGrowth of the level's rate on average, to at least satMinBacklog, the
// server completes clearly fewer requests than arrive and the level is
// stopped (a server that keeps up holds its backlog steady around rate ×
// latency). A nil *saturation watches nothing.
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
)

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
	var backlog []int64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		// The dispatcher takes a job before waiting for its time: one
		// counted job may not be sent yet.
		backlog = append(backlog, max(m.sent.Load()-1-m.done.Load(), 0))
		if why, ok := m.overSaturated(backlog); ok {
			m.mu.Lock()
			m.why = why
			m.mu.Unlock()
			log.Warn("the server is over-saturated: stopping this level early", "why", why)
			stop(errOverSaturated)
			return
		}
	}
}

// overSaturated judges the backlog samples (pure: tested without a clock).
func (m *saturation) overSaturated(backlog []int64) (string, bool) {
	n := len(backlog)
	if n <= satSteps || backlog[n-1] < satMinBacklog {
		return "", false
	}
	for k := n - satSteps; k < n; k++ {
		if backlog[k] <= backlog[k-1] {
			return "", false
		}
	}
	span := time.Duration(satSteps) * m.period
	growth := float64(backlog[n-1]-backlog[n-1-satSteps]) / span.Seconds()
	if growth < satGrowth*m.rate {
		return "", false
	}
	return fmt.Sprintf("%d requests behind and growing by %.1f/s at %.1f req/s offered (%d samples %v apart)",
		backlog[n-1], growth, m.rate, satSteps+1, m.period), true
}
