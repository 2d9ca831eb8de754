package sweep

import (
	"fmt"

	"servesim/internal/steady"
)

// Judge sets a run's row verdict, the same for a simulated and a live
// sweep, in this order: a run stopped early (stopped is the reason, ""
// when it was not) is unstable; so is a run without a steady state (steady, from
// steady.Check; unsteady words its reason, with one %.1f verb for the
// growth in percent); a run in which no request completed is ok without
// latencies. Otherwise it returns true: the row is ok and the caller fills
// in its latencies.
func Judge(r *Row, stopped string, steady steady.Verdict, completed int64, unsteady string) bool {
	r.Status, r.Reason = StatusOK, ""
	r.QueueGrowth = steady.Growth
	switch {
	case stopped != "":
		r.Status, r.Reason = StatusUnstable, stopped
	case !steady.Steady:
		r.Status, r.Reason = StatusUnstable, fmt.Sprintf(unsteady, 100*steady.Growth)
	case completed == 0:
		r.Reason = "no request completed"
	default:
		return true
	}
	return false
}
