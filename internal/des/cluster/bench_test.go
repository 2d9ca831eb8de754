package cluster

import (
	"fmt"
	"io"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/latency"
	"servesim/internal/des/metrics"
	"servesim/internal/des/sim"
)

// chatbotInstance is Qwen3-14B on one H100 with the trained-physics model
// and spec defaults, as in sim's single-instance benchmark.
func chatbotInstance(tb testing.TB) instance.Config {
	m, err := latency.LookupModel("qwen3-14b")
	if err != nil {
		tb.Fatal(err)
	}
	g, err := latency.LookupGPU("H100")
	if err != nil {
		tb.Fatal(err)
	}
	lat, err := latency.NewTrainedPhysics(latency.TrainedPhysicsConfig{Model: m, GPU: g, TP: 1})
	if err != nil {
		tb.Fatal(err)
	}
	blocks, err := latency.KVBlocks(m, g, 1, 0.9, 16)
	if err != nil {
		tb.Fatal(err)
	}
	return instance.Config{KV: kvcache.Config{Blocks: int(blocks), BlockSize: 16}, MaxNumSeqs: 256, MaxNumBatchedTokens: 2048,
		MaxModelLen: int(latency.MaxModelLen(m, blocks, 16)), Latency: lat, FastForward: true}
}

// genSource: Poisson arrivals at rate req/s, input 512±128 and output
// 256±64 tokens, generated lazily with recycled requests (sim's benchmark
// workload scaled by the number of instances).
type genSource struct {
	rng     *rand.Rand
	n, i    int
	meanGap float64
	t       float64
	free    []*instance.Request
}

func (g *genSource) Next() (*instance.Request, error) {
	if g.i >= g.n {
		return nil, io.EOF
	}
	g.i++
	g.t += g.rng.ExpFloat64() * g.meanGap
	in, out := max(1, int(512+128*g.rng.NormFloat64())), max(1, int(256+64*g.rng.NormFloat64()))
	var buf []int32
	r := &instance.Request{}
	if k := len(g.free); k > 0 {
		r = g.free[k-1]
		g.free = g.free[:k-1]
		buf = r.Prompt[:0]
		*r = instance.Request{}
	}
	if cap(buf) < in {
		buf = make([]int32, 0, max(in, 1024))
	}
	base := int32(g.i) << 10
	for k := 0; k < in; k++ {
		buf = append(buf, base+int32(k))
	}
	r.ID, r.ArrivalUs, r.Prompt, r.OutputLen, r.MaxOutputLen = int64(g.i), int64(g.t), buf, out, out
	return r, nil
}

func runChatbotCluster(tb testing.TB, n, insts int, policy RoutingPolicy) (metrics.Summary, Outcome) {
	ic := chatbotInstance(tb)
	cfg := Config{Routing: policy, SnapshotRefreshUs: 50_000, CacheSignalDelayUs: 50_000, Seed: 42}
	for i := 0; i < insts; i++ {
		cfg.Instances = append(cfg.Instances, ic)
	}
	agg, _ := metrics.NewAggregator(nil)
	src := &genSource{rng: rand.New(rand.NewPCG(42, 28)), n: n, meanGap: 1e6 / (28 * float64(insts))}
	c, err := New(cfg, src, sim.SinkFunc(func(res *instance.Result, r *instance.Request) {
		agg.Add(res)
		src.free = append(src.free, r)
	}))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := c.Run()
	if err != nil {
		tb.Fatal(err)
	}
	return agg.Summary(out.Info), out
}

// BenchmarkClusterChatbot is sim's BenchmarkChatbot workload near
// saturation (28 req/s per instance) on 1 and 16 instances with several
// routing policies. Compare sim-req/cpu-s with sim's
// BenchmarkChatbot/n=…/ff: the target is a 16-instance per-request
// cost within 2× of the single instance's. Sizes 100k (quick) and 1M (run
// with -benchtime 1x):
//
//	go test ./internal/des/cluster -run '^$' -bench ClusterChatbot -benchtime 1x
func BenchmarkClusterChatbot(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		for _, c := range []struct {
			insts  int
			policy RoutingPolicy
		}{{1, RoundRobin}, {16, RoundRobin}, {16, LeastLoaded}, {16, Weighted}} {
			b.Run(fmt.Sprintf("n=%d/instances=%d/%s", n, c.insts, c.policy), func(b *testing.B) {
				if n > 100_000 && testing.Short() {
					b.Skip("1M skipped in -short mode")
				}
				b.ReportAllocs()
				var out Outcome
				var sum metrics.Summary
				start, cpu0 := time.Now(), cpuSeconds()
				for i := 0; i < b.N; i++ {
					sum, out = runChatbotCluster(b, n, c.insts, c.policy)
				}
				wall, cpu := time.Since(start).Seconds(), cpuSeconds()-cpu0
				b.ReportMetric(float64(n)*float64(b.N)/wall, "sim-req/s")
				b.ReportMetric(float64(n)*float64(b.N)/cpu, "sim-req/cpu-s")
				b.ReportMetric(100*float64(out.Counters.FastSteps)/float64(max(1, out.Counters.Steps)), "inline-%")
				b.ReportMetric(sum.TTFTMeanMs, "ttft-mean-ms")
				if sum.CompletedRequests != int64(n) {
					b.Fatalf("completed %d of %d", sum.CompletedRequests, n)
				}
			})
		}
	}
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
