package alarm

import "time"

// Timer is a reusable one-shot timer with a precise wake-up (see the
// package comment). It is owned by one goroutine at a time.
type Timer struct {
	t  *time.Timer
	fd wakeFD
}

// New returns a stopped Timer. It never fails: without a timerfd the Timer
// is an ordinary Go timer.
func New() *Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Timer{t: t, fd: openWakeFD()}
}

// Reset arms the timer to fire after d and returns its channel; a previous
// arming is replaced. The channel delivers one value at (or just after) the
// instant, as a time.Timer's does.
func (t *Timer) Reset(d time.Duration) <-chan time.Time {
	if d > 0 {
		// The kernel alarm goes a few µs after the Go timer's instant, so
		// that when the poller wakes the timer is already due.
		t.fd.arm(d + 5*time.Microsecond)
	}
	t.t.Reset(d)
	return t.t.C
}

// C is the channel of the current arming.
func (t *Timer) C() <-chan time.Time { return t.t.C }

// Stop disarms the timer.
func (t *Timer) Stop() {
	t.t.Stop()
	t.fd.arm(0)
}

// Close releases the kernel timer. The Timer must not be used afterwards.
func (t *Timer) Close() error {
	t.t.Stop()
	return t.fd.close()
}

// SleepUntil blocks until the instant at, precisely; it returns at once if
// at has passed.
func (t *Timer) SleepUntil(at time.Time) {
	if d := time.Until(at); d > 0 {
		<-t.Reset(d)
	}
}

// Precise reports whether the Timer has a kernel alarm behind it.
func (t *Timer) Precise() bool { return t.fd.precise() }
