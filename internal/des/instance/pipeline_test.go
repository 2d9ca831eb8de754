package instance

import (
	"math/rand/v2"
	"slices"
	"testing"

	"servesim/internal/testkit/fake"
)

// TestPipelineHandChecked: two stages, one request per micro-batch (S = 2),
// stage time = StepTime / 2, 0.5 µs of activation transfer per token.
//
//	A prefill  stage 0 [0,60)    stage 1 [60,115)   first token 115
//	B prefill  stage 0 [60,120)  stage 1 [120,175)  first token 175
//	A decode   stage 0 [120,172) stage 1 [175,226)  done 226
//	B decode   stage 0 [175,227) stage 1 [227,278)  done 278
func TestPipelineHandChecked(t *testing.T) {
	cfg := baseConfig()
	cfg.MaxNumSeqs, cfg.PipelineStages, cfg.StageSendUsPerToken = 2, 2, 0.5
	h := newHarness(t, cfg, fake.Linear{Base: 100, PerPrefillToken: 1, PerDecode: 2})
	h.at(&Request{ID: 1, Prompt: tokens(10, 1), OutputLen: 2, MaxOutputLen: 2})
	h.at(&Request{ID: 2, Prompt: tokens(10, 500), OutputLen: 2, MaxOutputLen: 2})
	h.run()
	if want := []string{"P10/0/10", "P10/0/10", "D1/10", "D1/10"}; !slices.Equal(h.model.steps, want) {
		t.Errorf("micro-batches %q, want %q", h.model.steps, want)
	}
	for id, w := range map[int64][3]int64{1: {115, 226, 111}, 2: {175, 278, 103}} {
		r := h.results[id]
		if r.Status != StatusCompleted || r.FirstTokenUs != w[0] || r.DoneUs != w[1] || r.ITLSumUs != w[2] || r.ITLCount != 1 {
			t.Errorf("request %d: %+v, want first token %d, done %d, ITL %d", id, r, w[0], w[1], w[2])
		}
	}
	if c := h.in.Counters(); c.Steps != 4 {
		t.Errorf("%d micro-batches counted, want 4", c.Steps)
	}
}

// TestPipelineInvariants: random configurations with 2 to 4 stages keep
// every invariant of the reference path (conservation, KV, INV-5, INV-8
// with in-flight micro-batches, ITL sample counts), whatever the
// preemptions and timeouts.
func TestPipelineInvariants(t *testing.T) {
	var preempts int64
	for seed := uint64(0); seed < 400; seed++ {
		rng := rand.New(rand.NewPCG(seed, 57))
		cfg := randomConfig(rng)
		cfg.PipelineStages = 2 + rng.IntN(3)
		cfg.MaxNumSeqs = max(cfg.MaxNumSeqs, cfg.PipelineStages)
		cfg.StageSendUsPerToken = []float64{0, 0.5, 3}[rng.IntN(3)]
		ws := randomWorkload(rng, cfg.MaxModelLen)
		for _, ff := range []bool{false, true} {
			o := simulate(cfg, ws, ff)
			for _, v := range o.violations {
				t.Fatalf("seed %d (%d stages): %s", seed, cfg.PipelineStages, v)
			}
			preempts += o.counters.Preemptions
		}
	}
	if preempts == 0 {
		t.Error("no preemption in pipelined runs")
	}
}
