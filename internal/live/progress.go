package live

import (
	"fmt"
	"slices"
	"time"
)

// liveEvery is how often the progress line's figures are recomputed.
const liveEvery = 250 * time.Millisecond

// liveSample bounds the TTFTs sorted for the progress line's median.
const liveSample = 20000

// progressLine is the progress bar on stderr: requests done, errors, completion
// rate and the median TTFT so far. With no terminal (bar nil) it does
// nothing, so the sink pays nothing for it.
type progressLine struct {
	bar   Progress
	start time.Time
	last  time.Time
	buf   []float64
}

func newProgressLine(bar Progress) *progressLine {
	return &progressLine{bar: bar, start: time.Now()}
}

// update refreshes the bar from the tally at most every liveEvery.
func (l *progressLine) update(t *tally) {
	if l.bar == nil {
		return
	}
	now := time.Now()
	if now.Sub(l.last) < liveEvery {
		return
	}
	l.last = now
	done := t.ok + t.failed
	rate := float64(done) / max(now.Sub(l.start).Seconds(), 1e-3)
	// The bar itself shows the requests done (its count).
	desc := fmt.Sprintf("errors %d, %.1f req/s", t.failed, rate)
	if n := len(t.ttft); n > 0 {
		step := max(1, n/liveSample)
		l.buf = l.buf[:0]
		for i := 0; i < n; i += step {
			l.buf = append(l.buf, t.ttft[i])
		}
		slices.Sort(l.buf)
		desc += fmt.Sprintf(", p50 TTFT %.1f ms", l.buf[len(l.buf)/2])
	}
	// The count first: Describe renders at once, with the count it has.
	l.bar.Set(done, "")
	l.bar.Set(done, desc)
}

func (l *progressLine) finish() {
	if l.bar != nil {
		l.bar.Finish()
	}
}
