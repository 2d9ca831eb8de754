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

// TestStepRequestsKeepTokenChunks: of a request's ITL rows only the chunks
// that can carry a token place it in steps: none before its first token
// (a role-only event) and at most one a token, so the finish-only and
// usage-only events a server sends after the last token (Ollama: two, the
// first a step later) do not count as one more token.
func TestStepRequestsKeepTokenChunks(t *testing.T) {
	tr := &tracev2.Trace{Records: []tracev2.Record{
		{RequestID: 1, Status: "ok", Streaming: true, InputTokens: 10, OutputTokens: 3, FirstChunkTimeUs: 100, FirstTokenTimeUs: 110, LastChunkTimeUs: 160},
		{RequestID: 2, Status: "ok", Streaming: true, InputTokens: 10, OutputTokens: 4, FirstChunkTimeUs: 100, LastChunkTimeUs: 130},
	}}
	itl := []tracev2.ITLRow{
		{RequestID: 1, TimestampUs: 100}, {RequestID: 1, TimestampUs: 110}, {RequestID: 1, TimestampUs: 120},
		{RequestID: 1, TimestampUs: 130}, {RequestID: 1, TimestampUs: 150}, {RequestID: 1, TimestampUs: 150},
		{RequestID: 2, TimestampUs: 100}, {RequestID: 2, TimestampUs: 130}, // several tokens a chunk: all kept
	}
	reqs := StepRequests(tr, itl)
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := reqs[0].Chunks; len(got) != 3 || got[0] != 110 || got[2] != 130 {
		t.Errorf("request 1 chunks %v, want [110 120 130]", got)
	}
	if got := reqs[1].Chunks; len(got) != 2 || got[0] != 100 || got[1] != 130 {
		t.Errorf("request 2 chunks %v, want [100 130]", got)
	}
}
