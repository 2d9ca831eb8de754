package live

import "testing"

// TestSLOTTFTms: the x-slo-ttft-ms header's value, from the request's own
// target or its class's, rounded up to whole milliseconds.
func TestSLOTTFTms(t *testing.T) {
	for _, tc := range []struct {
		targetUs int64
		classMs  float64
		want     int64
	}{
		{250000, 0, 250},
		{250001, 900, 251}, // the request's own target wins
		{0, 1500.2, 1501},
		{0, 0, 0},
		{0, 1e300, 1e12}, // bounded
	} {
		if got := sloTTFTms(tc.targetUs, tc.classMs); got != tc.want {
			t.Errorf("sloTTFTms(%d, %g): got %d, want %d", tc.targetUs, tc.classMs, got, tc.want)
		}
	}
}
