package instance

import (
	"testing"

	"servesim/internal/testkit/fake"
)

// TestResetRequestIsANewRequest: a request that timed out while decoding
// lazily leaves a stale entry in the completion heap; reused through Reset
// as a new request that decodes lazily in turn, it must not be finished by
// that entry. The new request's result equals that of a fresh one.
func TestResetRequestIsANewRequest(t *testing.T) {
	run := func(reuse bool) (Result, Result, Counters) {
		cfg := baseConfig()
		cfg.FastForward = true
		cfg.KV.Blocks = 512
		h := newHarness(t, cfg, fake.Linear{Base: 1000, PerPrefillToken: 1, PerDecode: 10})
		// b decodes long enough that the instance never idles.
		b := &Request{ID: 1, Prompt: tokens(8, 100), OutputLen: 200, MaxOutputLen: 200}
		// a times out after about 30 of its 150 tokens, decoding lazily.
		a := &Request{ID: 2, Prompt: tokens(8, 200), OutputLen: 150, MaxOutputLen: 150, DeadlineUs: 35_000}
		h.at(b)
		h.at(a)
		done := h.in.cfg.OnDone
		h.in.cfg.OnDone = func(res *Result, r *Request) {
			done(res, r)
			if res.ID != 2 {
				return
			}
			c := &Request{}
			if reuse {
				a.Reset()
				c = a
			}
			c.ID, c.ArrivalUs, c.Prompt, c.OutputLen, c.MaxOutputLen = 3, h.eng.Now(), tokens(8, 300), 120, 120
			h.at(c)
		}
		h.run()
		if h.results[2].Status != StatusTimedOut {
			t.Fatalf("request 2: %v, want timed out", h.results[2].Status)
		}
		return h.results[1], h.results[3], h.in.Counters()
	}
	fb, fc, fcnt := run(false)
	rb, rc, _ := run(true)
	if fc.Status != StatusCompleted || fc.OutputTokens != 120 || fcnt.LazySteps == 0 {
		t.Fatalf("fresh request 3: %+v after %d lazy steps; want 120 tokens, completed", fc, fcnt.LazySteps)
	}
	if rc != fc || rb != fb {
		t.Errorf("reused request 3: %+v\nwant the fresh one's %+v", rc, fc)
	}
}
