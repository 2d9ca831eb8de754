package replay

import (
	"testing"
	"time"

	"servesim/internal/workload"
)

// TestProgressTotal: with a request count the progress bar has a length
// (percentage and ETA); only a horizon-bounded workload spins.
func TestProgressTotal(t *testing.T) {
	for _, tt := range []struct {
		opts workload.Options
		want int64
	}{
		{workload.Options{Preset: "chatbot", Rate: ptr(5.0), NumRequests: ptr[int64](500)}, 500},
		{workload.Options{Preset: "chatbot", Rate: ptr(5.0)}, workload.DefaultNumRequests},
		{workload.Options{Preset: "chatbot", Rate: ptr(5.0), NumRequests: ptr[int64](0), Horizon: ptr(10 * time.Second)}, -1},
	} {
		wl, err := workload.Resolve(tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := progressTotal(wl); got != tt.want {
			t.Errorf("progressTotal = %d, want %d", got, tt.want)
		}
	}
}
