package cluster

import (
	"testing"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/sim"
	"servesim/internal/testkit/fake"
)

// TestEncodeFlowHandChecked: one encoder whose pass takes 100 + 1 µs a
// media token. Two multimodal requests at t = 0 with 50 media tokens each
// are encoded one after the other (done at 150 and 300) and only then
// reach the instance; a text request goes to the instance at once; a
// request with more media than a pass takes is rejected at the encode
// stage, in its own bucket.
func TestEncodeFlowHandChecked(t *testing.T) {
	cfg := Config{Instances: []instance.Config{{KV: kvcache.Config{Blocks: 100, BlockSize: 4}, MaxNumSeqs: 8,
		MaxNumBatchedTokens: 512, MaxModelLen: 400, Latency: &fake.Linear{Base: 10}}},
		Encode: Encode{Instances: 1, MaxTokens: 60, Latency: &fake.Linear{Base: 100, PerPrefillToken: 1}}}
	reqs := []*instance.Request{
		{ID: 1, Prompt: tokens(60, 0), OutputLen: 2, MediaTokens: 50},
		{ID: 2, Prompt: tokens(60, 100), OutputLen: 2, MediaTokens: 50},
		{ID: 3, Prompt: tokens(20, 200), OutputLen: 2},
		{ID: 4, Prompt: tokens(90, 300), OutputLen: 2, MediaTokens: 80},
	}
	got := map[int64]instance.Result{}
	c, err := New(cfg, &sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, _ *instance.Request) { got[res.ID] = *res }))
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.Run()
	if err != nil {
		t.Fatal(err)
	}
	for id, enq := range map[int64]int64{1: 150, 2: 300, 3: 0} {
		if r := got[id]; r.Status != instance.StatusCompleted || r.EnqueueUs != enq {
			t.Errorf("request %d: %s, enqueued at %d; want completed, enqueued at %d", id, r.Status, r.EnqueueUs, enq)
		}
	}
	if r := got[4]; r.Status != instance.StatusRejected || !r.EncodeRejected {
		t.Errorf("request 4: %s (encode rejected %v); want rejected at the encode stage", r.Status, r.EncodeRejected)
	}
	if out.Encoded != 2 || out.EncodeRejected != 1 || out.EncodeBusyUs != 300 || out.Rejected != 0 {
		t.Errorf("outcome: %d encoded, %d encode-rejected, %d µs busy, %d rejected; want 2, 1, 300, 0",
			out.Encoded, out.EncodeRejected, out.EncodeBusyUs, out.Rejected)
	}
}
