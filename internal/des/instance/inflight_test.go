package instance

import (
	"testing"

	"servesim/internal/testkit/fake"
)

// TestInFlightPhase: a request enqueued while a step executes records the
// time left of that step and its length; one reaching an idle instance
// records neither. With fast-forward on (steps run inline until the next
// event) the figures are the same.
func TestInFlightPhase(t *testing.T) {
	for _, ff := range []bool{false, true} {
		c := baseConfig()
		c.FastForward = ff
		// Steps of 100 µs plus 10 µs per prompt token: request 1's prefill
		// [0, 180), then decodes of 100 µs: [180, 280), [280, 380), ...
		h := newHarness(t, c, fake.Linear{Base: 100, PerPrefillToken: 10})
		h.at(&Request{ID: 1, Prompt: tokens(8, 0), OutputLen: 6})
		h.at(&Request{ID: 2, ArrivalUs: 50, Prompt: tokens(4, 100), OutputLen: 2})
		h.at(&Request{ID: 3, ArrivalUs: 50_000, Prompt: tokens(4, 200), OutputLen: 2})
		h.run()
		for _, w := range []struct {
			id         int64
			wait, step int64
		}{{1, 0, 0}, {2, 130, 180}, {3, 0, 0}} {
			r := h.results[w.id]
			if r.InFlightWaitUs != w.wait || r.InFlightStepUs != w.step {
				t.Errorf("fast-forward %v, request %d: waited %d µs of a %d µs step in flight, want %d of %d",
					ff, w.id, r.InFlightWaitUs, r.InFlightStepUs, w.wait, w.step)
			}
		}
	}
}
