package sweep

import "math"

// Steady-state test.
//
// A run reaches a steady state when the number of requests in the system
// (arrived, not yet completed) stops growing. When the offered load exceeds
// what the deployment serves, that number grows for as long as requests
// arrive, every latency grows with it, and a percentile of the run says
// more about the run's length than about the deployment: such a run is
// flagged unstable and none of its latencies is reported.
//
// The test. Let the arrival window be [t0, t1] (first and last arrival),
// T = t1 − t0, and L(t) the requests in the system at time t; a request that
// never completed (timed out, or unfinished when the run stopped) stays in
// the system to the end, because it is load the deployment did not serve.
// With Lq the time average of L over the second quarter of the window
// [t0 + T/4, t0 + T/2] (past the warm-up) and Ll its average over the last
// quarter [t0 + 3T/4, t1], and n the arrivals of the second half, the
// excess is Ll − Lq. The run is unstable when
//
//	Ll − Lq > max(1% of n, √n).
//
// If arrivals outpace service by a fraction δ, L grows by δ per arrival
// and Ll − Lq ≈ δ·n: the first bound flags a shortfall of more than 1% of
// the load. The second keeps noise out of small runs: a deployment that
// keeps up holds L stationary, so the two averages differ by a bounded
// amount whatever n; only at exactly balanced load (which has no steady
// state either) does the backlog wander like a random walk, by about √n
// after n arrivals. A load that varies over the window (a production
// trace) changes L only through Little's law, L = λ·W, which is tiny next
// to n when the deployment keeps up. Runs with fewer than
// MinSteadyRequests arrivals, or all arriving at once, are not tested
// (steady).
const (
	steadyFraction    = 0.01
	steadySigmas      = 1.0
	MinSteadyRequests = 16
)

// Steadiness is the outcome of the steady-state test.
type Steadiness struct {
	Steady bool
	// Growth is (Ll − Lq)/n: the share of the second half's arrivals that
	// piled up; about the shortfall δ of an overloaded run, near 0 in a
	// steady one.
	Growth float64
}

// SteadyState runs the test on a run's requests: arrival times and
// completion times (µs, any common origin), done[i] < 0 when request i
// never completed. Requests that should not count (refused by admission,
// dropped as unservable) are best passed with done = arrival.
func SteadyState(arrival, done []int64) Steadiness {
	n := len(arrival)
	if n < MinSteadyRequests || len(done) != n {
		return Steadiness{Steady: true}
	}
	t0, t1 := arrival[0], arrival[0]
	for _, a := range arrival {
		t0, t1 = min(t0, a), max(t1, a)
	}
	T := float64(t1 - t0)
	if T <= 0 {
		return Steadiness{Steady: true}
	}
	at := func(f float64) float64 { return float64(t0) + f*T }
	qa, qb, qc, qd := at(0.25), at(0.5), at(0.75), float64(t1)
	// ∫_x^y 1[e ≤ t] dt = clamp(y − max(x, e), 0, y − x)
	area := func(e, x, y float64) float64 { return math.Max(0, y-math.Max(x, e)) }
	var lq, ll float64
	n2 := 0
	for i, a := range arrival {
		fa := float64(a)
		lq += area(fa, qa, qb)
		ll += area(fa, qc, qd)
		if fa > qb {
			n2++
		}
		if done[i] >= 0 {
			fd := float64(done[i])
			lq -= area(fd, qa, qb)
			ll -= area(fd, qc, qd)
		}
	}
	lq /= qb - qa
	ll /= qd - qc
	if n2 == 0 {
		return Steadiness{Steady: true}
	}
	excess := ll - lq
	growth := excess / float64(n2)
	limit := math.Max(steadyFraction*float64(n2), steadySigmas*math.Sqrt(float64(n2)))
	return Steadiness{Steady: excess <= limit, Growth: growth}
}
