package cluster

import (
	"fmt"
	"math/rand/v2"
	"servesim/internal/des/destest"
	"syscall"
	"testing"
	"time"

	"servesim/internal/des/instance"
	"servesim/internal/des/metrics"
	"servesim/internal/des/sim"
)

func runChatbotCluster(tb testing.TB, n, insts int, policy RoutingPolicy) (metrics.Summary, Outcome) {
	ic := destest.ChatbotInstance(tb, true)
	cfg := Config{Routing: policy, SnapshotRefreshUs: 50_000, CacheSignalDelayUs: 50_000, Seed: 42}
	for i := 0; i < insts; i++ {
		cfg.Instances = append(cfg.Instances, ic)
	}
	agg, _ := metrics.NewAggregator(nil)
	src := &destest.Source{Rng: rand.New(rand.NewPCG(42, 28)), N: n, MeanGapUs: 1e6 / (28 * float64(insts)), Lengths: destest.ChatbotLengths}
	c, err := New(cfg, src, sim.SinkFunc(func(res *instance.Result, r *instance.Request) {
		agg.Add(res)
		src.Recycle(r)
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
