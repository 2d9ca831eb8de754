package steady

import (
	"math"
	"testing"
)

// TestStreamAgreesWithCheck: the bounded histogram reaches Check's verdict
// and nearly its growth on the runs Check is tested on, whatever the order
// the requests come in and however long the run (the buckets widen).
func TestStreamAgreesWithCheck(t *testing.T) {
	const n = 10_000
	for _, tc := range []struct {
		name    string
		arrival []int64
		service int64
	}{
		{"overload 10%", every(n, 10_000), 11_000},
		{"overload 2%", every(n, 10_000), 10_200},
		{"load 90%", every(n, 10_000), 9_000},
		{"poisson 95%", poisson(n, 10_000, 7), 9_500},
		{"poisson 110%", poisson(n, 10_000, 7), 11_000},
		{"late start, overload", shift(every(n, 1_000), 3_600_000_000), 1_100},
	} {
		start := fifo(tc.arrival, func(int) int64 { return tc.service })
		for i := n - 1; i >= n-300; i-- {
			start[i] = -1 // never served: waiting at the end
		}
		want := Check(tc.arrival, start)
		var s Stream
		for i := n - 1; i >= 0; i-- { // completion order is not arrival order
			s.Add(tc.arrival[i], start[i])
		}
		got := s.Verdict()
		if got.Steady != want.Steady || math.Abs(got.Growth-want.Growth) > 0.001 {
			t.Errorf("%s: stream %+v, Check %+v", tc.name, got, want)
		}
	}
	var s Stream
	for i := range MinRequests - 1 {
		s.Add(int64(i), -1)
	}
	if !s.Verdict().Steady {
		t.Error("too few requests to test should count as steady")
	}
}

func shift(a []int64, by int64) []int64 {
	for i := range a {
		a[i] += by
	}
	return a
}
