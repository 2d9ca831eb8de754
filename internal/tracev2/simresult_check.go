package tracev2

import (
	"fmt"
	"math"
)

// maxSimTimeUs bounds every time of a SimResult: 10^15 µs (31.7 years), the
// threshold above which a trace time is read as a Unix-epoch instant.
const maxSimTimeUs = float64(EpochThresholdUs)

// Sentinels for the required fields, set before an object is decoded: a
// field still holding one was missing (or null).
const (
	unsetID    = math.MinInt64
	unsetCount = math.MinInt
)

// unsetSimResult is the SimResult an object is decoded into.
func unsetSimResult() SimResult {
	return SimResult{RequestID: unsetID, TTFTUs: math.NaN(), E2EUs: math.NaN(), InputTokens: unsetCount, OutputTokens: unsetCount}
}

// checkSimResult validates a decoded object as strictly as a trace row
// (docs/tracev2.md §9): the five BLIS fields present, times finite, not negative and
// below maxSimTimeUs with ttft_us ≤ e2e_us, counts within [0, MaxTokens].
// line and col locate the object's '{'.
func checkSimResult(r *SimResult, name string, line, col int) error {
	fail := func(field, msg string) error {
		what := "field " + field
		if field == "" {
			what = "json"
		}
		return &Error{File: name, Line: line, Column: col, What: what, Msg: msg}
	}
	missing := 0
	for _, m := range []bool{r.RequestID == unsetID, math.IsNaN(r.TTFTUs), math.IsNaN(r.E2EUs),
		r.InputTokens == unsetCount, r.OutputTokens == unsetCount} {
		if m {
			missing++
		}
	}
	if missing == 5 {
		return fail("", "an object with none of the SimResult fields (request_id, ttft_us, e2e_us, input_tokens, output_tokens): "+
			"want a JSON array of SimResults or JSON Lines, not a wrapper object")
	}
	switch {
	case r.RequestID == unsetID:
		return fail("request_id", "missing or null")
	case r.RequestID < 0:
		return fail("request_id", fmt.Sprintf("%d is negative", r.RequestID))
	}
	for _, t := range []struct {
		name     string
		v        float64
		required bool
	}{{"ttft_us", r.TTFTUs, true}, {"e2e_us", r.E2EUs, true}, {"itl_mean_us", r.ITLMeanUs, false},
		{"scheduling_delay_us", r.SchedulingDelayUs, false}, {"wait_in_flight_us", r.WaitInFlightUs, false},
		{"step_in_flight_us", r.StepInFlightUs, false}} {
		switch {
		case math.IsNaN(t.v) && t.required:
			return fail(t.name, "missing or null")
		case t.v < 0:
			return fail(t.name, fmt.Sprintf("%g is negative", t.v))
		case !(t.v <= maxSimTimeUs):
			return fail(t.name, fmt.Sprintf("%g µs is beyond 10^15 µs (31.7 years)", t.v))
		}
	}
	if r.TTFTUs > r.E2EUs {
		return fail("ttft_us", fmt.Sprintf("%g is after e2e_us %g: the first token cannot come after the last", r.TTFTUs, r.E2EUs))
	}
	for _, c := range []struct {
		name     string
		v        int
		required bool
	}{{"input_tokens", r.InputTokens, true}, {"output_tokens", r.OutputTokens, true},
		{"num_preemptions", r.NumPreemptions, false}, {"cached_input_tokens", r.CachedInputTokens, false}} {
		switch {
		case c.v == unsetCount && c.required:
			return fail(c.name, "missing or null")
		case c.v < 0:
			return fail(c.name, fmt.Sprintf("%d is negative", c.v))
		case c.v > MaxTokens && c.name != "num_preemptions":
			return fail(c.name, fmt.Sprintf("%d exceeds %d, the largest token count a trace may hold", c.v, MaxTokens))
		}
	}
	if r.WaitInFlightUs > r.StepInFlightUs {
		return fail("wait_in_flight_us", fmt.Sprintf("%g is longer than step_in_flight_us %g: a wait for the step in flight cannot outlast it",
			r.WaitInFlightUs, r.StepInFlightUs))
	}
	if r.CachedInputTokens > r.InputTokens {
		return fail("cached_input_tokens", fmt.Sprintf("%d exceeds input_tokens %d", r.CachedInputTokens, r.InputTokens))
	}
	if r.ArrivalUs < 0 || float64(r.ArrivalUs) > maxSimTimeUs {
		return fail("arrival_us", fmt.Sprintf("%d is outside [0, 10^15] µs", r.ArrivalUs))
	}
	return nil
}
