package tracev2

import "testing"

// TestOutcomeOf: the prefixes a simulated trace writes and a gateway's
// HTTP 429 are read back into their buckets; every other row is none.
func TestOutcomeOf(t *testing.T) {
	for _, c := range []struct {
		status, msg string
		want        Outcome
	}{
		{"incomplete", "rejected: tier-shed", OutcomeRefused},
		{"incomplete", "shed: gateway queue full", OutcomeShed},
		{"incomplete", "expired: gateway queue TTL", OutcomeExpired},
		{"incomplete", "evicted: gateway", OutcomeEvicted},
		{"error", "HTTP 429: too many requests", OutcomeRefused},
		{"error", "HTTP 503: overloaded", OutcomeNone},
		{"error", "shed: gateway queue full", OutcomeNone}, // only an incomplete row states a prefix
		{"incomplete", "horizon: in the gateway queue", OutcomeNone},
		{"incomplete", "dropped: unservable", OutcomeNone},
		{"ok", "", OutcomeNone},
	} {
		if got := OutcomeOf(c.status, c.msg); got != c.want {
			t.Errorf("OutcomeOf(%q, %q) = %d, want %d", c.status, c.msg, got, c.want)
		}
	}
	for _, o := range []Outcome{OutcomeRefused, OutcomeShed, OutcomeExpired, OutcomeEvicted} {
		if got := OutcomeOf("incomplete", OutcomePrefix(o)+"why"); got != o {
			t.Errorf("prefix of %d reads back as %d", o, got)
		}
	}
}
