package steady

import (
	"fmt"
	"math"
)

// A run reaches a steady state when its queue (requests arrived and not yet
// taken into service) stops growing. When the offered load exceeds what the
// deployment serves, the queue grows for as long as requests arrive, every
// latency grows with it, and a percentile of the run says more about the
// run's length than about the deployment: such a run is flagged unstable
// (a sweep reports none of its latencies; a run's summary says so beside
// them).
//
// The test. Let the arrival window be [t0, t1] (first and last arrival),
// T = t1 − t0, and Q(t) the requests waiting at time t: arrived, not yet
// scheduled for the first time (on a live server, whose scheduler is not
// seen, the first token stands in). A request that was never served (timed
// out, or waiting when the run stopped) waits to the end: it is load the
// deployment did not serve. With Qq the time average of Q over the second
// quarter of the window [t0 + T/4, t0 + T/2] (past the warm-up) and Ql its
// average over the last quarter [t0 + 3T/4, t1], and n the arrivals of the
// second half, the excess is Ql − Qq. The run is unstable when
//
//	Ql − Qq > max(1% of n, √n).
//
// If arrivals outpace service by a fraction δ, Q grows by δ per arrival
// and Ql − Qq ≈ δ·n: the first bound flags a shortfall of more than 1% of
// the load. The second keeps noise out of small runs: a deployment that
// keeps up holds Q stationary, so the two averages differ by a bounded
// amount whatever n; only at exactly balanced load (which has no steady
// state either) does the queue wander like a random walk, by about √n
// after n arrivals. A load that varies over the window (a production
// trace) moves Q by its bursts, which the quarter-long averages smooth,
// and by nothing that grows with n when the deployment keeps up. The
// running batch is not the queue: continuous batching takes requests in
// at once up to its limits, so a short run whose batch is still filling
// is not flagged. Runs with fewer than MinRequests arrivals, or all
// arriving at once, are not tested (steady).
const (
	steadyFraction = 0.01
	steadySigmas   = 1.0
	MinRequests    = 16
)

// Verdict is the outcome of the steady-state test.
type Verdict struct {
	Steady bool
	// Growth is (Ql − Qq)/n: the share of the second half's arrivals that
	// piled up; about the shortfall δ of an overloaded run, near 0 in a
	// steady one.
	Growth float64
}

// Check runs the test on a run's requests: arrival times and the
// times they left the queue (first scheduled; µs, any common origin),
// start[i] < 0 when request i was never served. Requests that should not
// count (refused by admission, dropped as unservable) are best passed with
// start = arrival.
func Check(arrival, start []int64) Verdict {
	n := len(arrival)
	if n < MinRequests || len(start) != n {
		return Verdict{Steady: true}
	}
	t0, t1 := arrival[0], arrival[0]
	for _, a := range arrival {
		t0, t1 = min(t0, a), max(t1, a)
	}
	if t1 <= t0 {
		return Verdict{Steady: true}
	}
	w := quarterWindows(t0, t1)
	var qq, ql float64
	n2 := 0
	for i, a := range arrival {
		fa := float64(a)
		qq += area(fa, w.qa, w.qb)
		ql += area(fa, w.qc, w.qd)
		if fa > w.qb {
			n2++
		}
		if start[i] >= 0 {
			fd := float64(start[i])
			qq -= area(fd, w.qa, w.qb)
			ql -= area(fd, w.qc, w.qd)
		}
	}
	return w.verdict(qq, ql, float64(n2))
}

// windows are the bounds of the second quarter [qa, qb] and the last
// quarter [qc, qd] of the arrival window [t0, t1].
type windows struct{ qa, qb, qc, qd float64 }

func quarterWindows(t0, t1 int64) windows {
	T := float64(t1 - t0)
	at := func(f float64) float64 { return float64(t0) + f*T }
	return windows{at(0.25), at(0.5), at(0.75), float64(t1)}
}

// area is ∫_x^y 1[e ≤ t] dt = clamp(y − max(x, e), 0, y − x): the time
// within [x, y] after the event at e.
func area(e, x, y float64) float64 { return math.Max(0, y-math.Max(x, e)) }

// verdict compares the queue's time integrals over the two windows (qq,
// ql: Σ arrival areas − Σ start areas), n2 the arrivals of the second half.
func (w windows) verdict(qq, ql, n2 float64) Verdict {
	qq /= w.qb - w.qa
	ql /= w.qd - w.qc
	if n2 <= 0 {
		return Verdict{Steady: true}
	}
	excess := ql - qq
	growth := excess / n2
	limit := math.Max(steadyFraction*n2, steadySigmas*math.Sqrt(n2))
	return Verdict{Steady: excess <= limit, Growth: growth}
}

// Reason says in words why a run is unstable, "" when it is steady: the
// line every summary and sweep row prints for it.
func (v Verdict) Reason() string {
	if v.Steady {
		return ""
	}
	return fmt.Sprintf("unstable: queue grows by %.1f%% of the second half's arrivals; no steady state, the latencies grow with the run's length", 100*v.Growth)
}
