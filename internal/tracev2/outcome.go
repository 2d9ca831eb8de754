package tracev2

import "strings"

// Outcome is where a request the serving stack let go before it ran
// ended: refused at admission, shed from the gateway queue, expired in it,
// or evicted after dispatch. A simulated trace states it as the prefix of
// an incomplete row's error_message (OutcomePrefix); a real one, as the
// HTTP 429 a gateway answers when it refuses.
type Outcome int

// Outcomes, in the order the reports list them.
const (
	OutcomeNone Outcome = iota // completed, failed, timed out or still running
	OutcomeRefused
	OutcomeShed
	OutcomeExpired
	OutcomeEvicted
)

// OutcomePrefix is the error_message prefix a simulated trace writes for o
// ("" for OutcomeNone); the text after it says by what.
func OutcomePrefix(o Outcome) string {
	switch o {
	case OutcomeRefused:
		return "rejected: "
	case OutcomeShed:
		return "shed: "
	case OutcomeExpired:
		return "expired: "
	case OutcomeEvicted:
		return "evicted: "
	}
	return ""
}

// OutcomeOf reads a row's outcome from its status and error_message: an
// incomplete row with one of the OutcomePrefix prefixes, or an error row
// answered with HTTP 429 (refused).
func OutcomeOf(status, errorMessage string) Outcome {
	switch status {
	case "incomplete":
		for _, o := range []Outcome{OutcomeRefused, OutcomeShed, OutcomeExpired, OutcomeEvicted} {
			if strings.HasPrefix(errorMessage, OutcomePrefix(o)) {
				return o
			}
		}
	case "error":
		if strings.HasPrefix(errorMessage, "HTTP 429") {
			return OutcomeRefused
		}
	}
	return OutcomeNone
}
