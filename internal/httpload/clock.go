package httpload

import "time"

// Clock stamps instants as whole microseconds since one origin, read from
// the monotonic clock (time.Since keeps the monotonic reading of origin, so
// wall-clock steps never move a stamp). A recorded instant is always ≥ 1:
// 0 means "never" in every time field of a Result.
type Clock struct {
	origin time.Time
}

// NewClock returns a clock whose t = 0 is origin. origin should come from
// time.Now() so that it carries a monotonic reading.
func NewClock(origin time.Time) Clock { return Clock{origin: origin} }

// Origin is the instant t = 0.
func (c Clock) Origin() time.Time { return c.origin }

// Now is the current instant in µs since the origin, at least 1.
func (c Clock) Now() int64 { return c.Stamp(time.Now()) }

// Stamp converts an instant to µs since the origin, at least 1 (instants
// at or before the origin are clamped, so a stamp is never mistaken for 0).
func (c Clock) Stamp(t time.Time) int64 {
	us := t.Sub(c.origin).Microseconds()
	if us < 1 {
		return 1
	}
	return us
}

// elapsed is the signed time since the origin, in µs, without clamping; the
// dispatcher uses it to compute waits.
func (c Clock) elapsed() int64 { return time.Since(c.origin).Microseconds() }

// At is the instant us µs after the origin.
func (c Clock) At(us int64) time.Time { return c.origin.Add(time.Duration(us) * time.Microsecond) }
