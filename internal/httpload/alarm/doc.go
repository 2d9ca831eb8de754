// Package alarm gives Go timers sub-millisecond precision on an idle
// process, without spinning.
//
// When every goroutine is blocked, the Go runtime sleeps in epoll_wait with
// a timeout rounded up to whole milliseconds, so a timer fires up to ~1 ms
// late; when the process is busy, timers are checked at every scheduling
// point and are precise. Spinning near a deadline (runtime.Gosched in a
// loop) fixes the idle case but starves the network poller: a spinning
// goroutine is always runnable, so the processors never poll for I/O and
// socket reads wait for the runtime's 10 ms background poll. A Timer here
// arms a Linux timerfd, registered with the runtime's poller, for the same
// instant as an ordinary Go timer: the timerfd wakes epoll_wait on time, the
// scheduler then runs its due timers, and the Go timer fires. On other
// systems, or when timerfd is unavailable, a Timer is an ordinary timer.
//
// It knows nothing of HTTP or load generation.
package alarm
