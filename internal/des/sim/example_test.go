package sim_test

import (
	"fmt"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/metrics"
	"servesim/internal/des/sim"
	"servesim/internal/testkit/fake"
)

// Example wires a run: a request source, a deployment config, a sink that
// feeds the metrics aggregator, and a completion callback that injects the
// next round of a session at completion + think time.
func Example() {
	reqs := []*instance.Request{
		{ID: 1, ArrivalUs: 0, Prompt: make([]int32, 100), OutputLen: 10, MaxOutputLen: 10, SessionID: "s1"},
		{ID: 2, ArrivalUs: 500, Prompt: make([]int32, 300), OutputLen: 20, MaxOutputLen: 20},
	}
	for i := range reqs[1].Prompt {
		reqs[1].Prompt[i] = int32(i + 1) // distinct from request 1's prompt
	}
	agg, _ := metrics.NewAggregator(nil)
	var s *sim.Simulator
	cfg := sim.Config{
		Instance: instance.Config{
			KV:         kvcache.Config{Blocks: 1000, BlockSize: 16},
			MaxNumSeqs: 256, MaxNumBatchedTokens: 2048, MaxModelLen: 16000,
			Latency:     &fake.Linear{Base: 10000, PerPrefillToken: 10, PerDecode: 100},
			FastForward: true,
		},
		OnDone: func(res *instance.Result, r *instance.Request) {
			if r.SessionID != "" && r.Round == 0 && res.Status == instance.StatusCompleted {
				next := &instance.Request{ID: 3, ArrivalUs: res.ArrivalUs + res.E2EUs + 1_000_000,
					Prompt: make([]int32, 150), OutputLen: 5, MaxOutputLen: 5, SessionID: r.SessionID, Round: 1}
				_ = s.Inject(next)
			}
		},
	}
	s, _ = sim.New(cfg, &sim.SliceSource{Reqs: reqs}, sim.SinkFunc(func(res *instance.Result, r *instance.Request) {
		agg.Add(res)
		fmt.Printf("request %d: %s, TTFT %d µs, E2E %d µs, %d tokens\n", res.ID, res.Status, res.TTFTUs, res.E2EUs, res.OutputTokens)
	}))
	out, err := s.Run()
	if err != nil {
		fmt.Println(err)
		return
	}
	sum := agg.Summary(out.Info)
	fmt.Printf("injected %d, completed %d, duration %.3f s, cache hit rate %.2f\n",
		sum.InjectedRequests, sum.CompletedRequests, sum.VLLMEstimatedDurationS, sum.CacheHitRate)
	// Hand check: request 1 prefills 100 tokens in 10 ms + 100·10 µs; request 2
	// (arrived at 500 µs) joins at 11 ms with 300 new tokens beside a decode
	// (13.1 ms); both then decode at 10.2 ms per step. Round 1 of session s1
	// reuses the 6 full blocks of zeros its predecessor left in the cache.
	// Output:
	// request 1: completed, TTFT 11000 µs, E2E 105700 µs, 10 tokens
	// request 2: completed, TTFT 23600 µs, E2E 216300 µs, 20 tokens
	// request 3: completed, TTFT 10540 µs, E2E 50940 µs, 5 tokens
	// injected 3, completed 3, duration 1.157 s, cache hit rate 0.18
}
