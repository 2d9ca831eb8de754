package steady

import (
	"math"
	"math/rand/v2"
	"testing"
)

// fifo is a single server taking requests in arrival order, each for
// serviceUs: the time each request starts service.
func fifo(arrival []int64, serviceUs func(i int) int64) []int64 {
	start := make([]int64, len(arrival))
	free := int64(0)
	for i, a := range arrival {
		start[i] = max(a, free)
		free = start[i] + serviceUs(i)
	}
	return start
}

func every(n int, gapUs int64) []int64 {
	a := make([]int64, n)
	for i := range a {
		a[i] = int64(i) * gapUs
	}
	return a
}

func poisson(n int, meanGapUs float64, seed uint64) []int64 {
	r := rand.New(rand.NewPCG(seed, 1))
	a := make([]int64, n)
	t := 0.0
	for i := range a {
		t += r.ExpFloat64() * meanGapUs
		a[i] = int64(t)
	}
	return a
}

func TestCheck(t *testing.T) {
	const n = 10_000
	for _, tc := range []struct {
		name        string
		arrival     []int64
		service     func(int) int64
		steady      bool
		growth      float64 // expected, ±0.005
		checkGrowth bool
	}{
		// Arrivals every 10 ms, service 11 ms: 1/11 of the arrivals pile up.
		{"overload 10%", every(n, 10_000), func(int) int64 { return 11_000 }, false, 1 - 10.0/11, true},
		// Service 10.2 ms: a 2% shortfall, flagged.
		{"overload 2%", every(n, 10_000), func(int) int64 { return 10_200 }, false, 1 - 10/10.2, true},
		// Service 10.04 ms: 0.4% shortfall, within the noise bound of 10k requests.
		{"overload 0.4%", every(n, 10_000), func(int) int64 { return 10_040 }, true, 0.004, true},
		{"load 90%", every(n, 10_000), func(int) int64 { return 9_000 }, true, 0, true},
		// Poisson arrivals at 95% load: a queue that wanders but keeps up.
		{"poisson 95%", poisson(n, 10_000, 7), func(int) int64 { return 9_500 }, true, 0, false},
		// Poisson arrivals at 110% load.
		{"poisson 110%", poisson(n, 10_000, 7), func(int) int64 { return 11_000 }, false, 1 - 10.0/11, true},
	} {
		start := fifo(tc.arrival, tc.service)
		got := Check(tc.arrival, start)
		if got.Steady != tc.steady {
			t.Errorf("%s: steady %v, want %v (growth %.4f)", tc.name, got.Steady, tc.steady, got.Growth)
		}
		if tc.checkGrowth && math.Abs(got.Growth-tc.growth) > 0.005 {
			t.Errorf("%s: growth %.4f, want %.4f", tc.name, got.Growth, tc.growth)
		}
	}
}

// Requests never served (timed out in the queue) are backlog: a run that
// keeps its queue short by dropping a growing share is not steady.
func TestSteadyStateCountsUnservedRequests(t *testing.T) {
	a := every(10_000, 10_000)
	start := make([]int64, len(a))
	for i := range a {
		start[i] = a[i]
		if i > 2_500 && i%10 == 0 { // from the first quarter on, 10% never served
			start[i] = -1
		}
	}
	if got := Check(a, start); got.Steady || math.Abs(got.Growth-0.1) > 0.01 {
		t.Errorf("got %+v, want unstable with growth about 0.1", got)
	}
	for i := range start {
		if start[i] < 0 {
			start[i] = a[i] // refused at once: not load
		}
	}
	if got := Check(a, start); !got.Steady {
		t.Errorf("requests refused at arrival are not backlog: got %+v", got)
	}
}

func TestSteadyStateUntestable(t *testing.T) {
	if !Check(every(MinRequests-1, 1), make([]int64, MinRequests-1)).Steady {
		t.Error("too few requests to test should count as steady")
	}
	a := make([]int64, 100) // all at t = 0
	start := make([]int64, 100)
	for i := range start {
		start[i] = int64(i) * 1000
	}
	if !Check(a, start).Steady {
		t.Error("requests arriving at once have no arrival window to test")
	}
}
