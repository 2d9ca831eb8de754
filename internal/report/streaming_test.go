package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

// nonStreamed is okRec answered in one body: one chunk, first = last.
func nonStreamed(id, send, done int64, in, out int) tracev2.Record {
	r := okRec(id, send, done, done, in, out)
	r.Streaming, r.NumChunks = false, 1
	return r
}

// TestNonStreamedCapture: a capture whose responses came whole has no TPOT
// or ITL; calibrate says "not measured" instead of grading a 0 against the
// simulator (a 0 would read MAPE 0.0%, grade poor).
func TestNonStreamedCapture(t *testing.T) {
	var recs []tracev2.Record
	var sims []tracev2.SimResult
	for i := range int64(5) {
		recs = append(recs, nonStreamed(i, i*1000, i*1000+400_000+i*1000, 100, 20))
		sims = append(sims, simOf(i, 50_000, 400_000+float64(i)*900, 100, 20))
	}
	r := build(t, Input{Trace: recs, Sim: sims, ITLGiven: true}, nil)
	for _, m := range []string{MetricTPOT, MetricITL} {
		if _, graded := r.Metrics[m]; graded {
			t.Errorf("%s graded from a non-streamed capture: %+v", m, r.Metrics[m])
		}
		if !strings.Contains(r.NotMeasured[m], "no matched request was streamed") {
			t.Errorf("not_measured[%s] = %q, want the reason", m, r.NotMeasured[m])
		}
	}
	if _, ok := r.Metrics[MetricE2E]; !ok {
		t.Error("e2e is measured by a non-streamed capture and must be graded")
	}
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"tpot", "itl"} {
		if !regexp.MustCompile(`(?m)^` + m + `\s+0\s+.*not measured\s*$`).MatchString(text.String()) {
			t.Errorf("text report lacks a %q row saying not measured:\n%s", m, text.String())
		}
	}
	// The first chunk of a response sent whole is its end, on both sides.
	if tt := r.Metrics[MetricTTFT]; tt == nil || tt.RequestLevel.MAPE > 0.01 {
		t.Errorf("ttft of a non-streamed capture = %+v, want it compared with the simulated completion", tt)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"not_measured": {`) {
		t.Errorf("JSON report lacks not_measured")
	}
}

// TestMixedStreaming: in a capture where some responses were streamed,
// TPOT comes from those only, with a warning counting the others.
func TestMixedStreaming(t *testing.T) {
	var recs []tracev2.Record
	var sims []tracev2.SimResult
	for i := range int64(6) {
		if i%2 == 0 {
			recs = append(recs, okRec(i, 0, 50_000, 50_000+19*10_000, 100, 20)) // TPOT 10 ms
		} else {
			recs = append(recs, nonStreamed(i, 0, 240_000, 100, 20))
		}
		sims = append(sims, simOf(i, 50_000, 50_000+19*10_000, 100, 20))
	}
	r := build(t, Input{Trace: recs, Sim: sims}, nil)
	tp := r.Metrics[MetricTPOT]
	if tp == nil || tp.Count != 3 || tp.RequestLevel.MAPE != 0 {
		t.Fatalf("tpot = %+v, want 3 streamed pairs with no error", tp)
	}
	found := false
	for _, w := range r.Warnings {
		found = found || strings.Contains(w, "3 of 6 matched requests were not streamed")
	}
	if !found || len(r.NotMeasured) != 0 {
		t.Errorf("warnings %q, not measured %v: want the 3 non-streamed counted and nothing marked not measured", r.Warnings, r.NotMeasured)
	}
}
