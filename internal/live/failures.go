package live

import (
	"fmt"

	"servesim/internal/exitcode"
	"servesim/internal/httpload"
)

// checkFailures fails a finished run in which no request succeeded (exit
// 1: the server, the URL or the model is wrong), or more than maxRate of
// the recorded requests failed (exit 3, --max-error-rate).
func checkFailures(st httpload.Stats, maxRate float64) error {
	failed := st.Results - st.OK
	switch {
	case st.Results == 0:
		return nil
	case st.OK == 0:
		return fmt.Errorf("every request failed (%d: %d errors, %d timeouts); the trace holds each one's error_message",
			st.Results, st.Errors, st.Timeouts)
	case float64(failed) > maxRate*float64(st.Results):
		return exitcode.WithCode(exitcode.Assertion, fmt.Errorf("%d of %d requests failed (%.1f%%), more than --max-error-rate %g",
			failed, st.Results, 100*float64(failed)/float64(st.Results), maxRate))
	}
	return nil
}
