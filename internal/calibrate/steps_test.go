package calibrate

import (
	"testing"

	"servesim/internal/steps"
	"servesim/internal/tracev2"
)

// TestStepsRealCapture: the RTX 4090 capture (vLLM, Llama-3.1-8B, engine
// timestamps of each request's first and last token, no ITL data) is
// explained: at least 90% of its chunks fall on step ends numbered as the
// requests' token counts require, and the few steps it places (where a
// step's both ends are known) are one-step gaps with a batch.
func TestStepsRealCapture(t *testing.T) {
	tr, err := tracev2.Load(tracev2.Input{Path: "../../testdata/captures/rtx4090-llama-3.1-8b.trace"}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reqs := StepRequests(tr, nil)
	if len(reqs) != 300 {
		t.Fatalf("%d requests with chunks, want the capture's 300", len(reqs))
	}
	ex, err := steps.Extract(reqs, steps.Options{WindowUs: 500, Budget: 2048})
	if err != nil {
		t.Fatal(err)
	}
	if ex.ExplainedShare() < 0.9 || ex.Chunks != 600 || ex.Sparse != 300 {
		t.Errorf("explained %d of %d chunks (%.3f), %d sparse; want at least 90%% of 600, all 300 sparse", ex.Explained, ex.Chunks, ex.ExplainedShare(), ex.Sparse)
	}
	if len(ex.Steps) == 0 {
		t.Fatal("no step placed")
	}
	for _, s := range ex.Steps {
		if s.DurationUs() < 20000 || s.Decodes+len(s.Prefills) == 0 {
			t.Errorf("step %+v: under the 20 ms an RTX 4090 step of an 8B model takes, or empty", s)
		}
	}
	t.Logf("%d step ends, %d steps placed, %d of %d chunks explained", ex.StepEnds, len(ex.Steps), ex.Explained, ex.Chunks)
}
