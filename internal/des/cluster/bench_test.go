package cluster

import (
	"fmt"
	"math/rand/v2"
	"servesim/internal/testkit/destest"
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

// runChatbotSingle is the same workload on sim's one-instance simulator
// (sim's BenchmarkChatbot/…/ff): the baseline of the per-request cost.
func runChatbotSingle(tb testing.TB, n int) metrics.Summary {
	agg, _ := metrics.NewAggregator(nil)
	src := &destest.Source{Rng: rand.New(rand.NewPCG(42, 28)), N: n, MeanGapUs: 1e6 / 28, Lengths: destest.ChatbotLengths}
	s, err := sim.New(sim.Config{Instance: destest.ChatbotInstance(tb, true)}, src, sim.SinkFunc(func(res *instance.Result, r *instance.Request) {
		agg.Add(res)
		src.Recycle(r)
	}))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := s.Run()
	if err != nil {
		tb.Fatal(err)
	}
	return agg.Summary(out.Info)
}

// BenchmarkClusterChatbot is sim's BenchmarkChatbot workload near
// saturation (28 req/s per instance) on sim's single instance (the
// baseline), and on clusters of 1 and 16 instances with several routing
// policies. The target is a 16-instance per-request cost within 2×
// of the single instance's: each cluster case reports x-single, its CPU
// time per request over that of a baseline run made right before it (on a
// shared machine the host's load drifts by tens of percent within a
// minute, so a baseline measured once per size skews the later cases).
// Sizes 100k (quick) and 1M (run with -benchtime 1x):
//
//	go test ./internal/des/cluster -run '^$' -bench 'ClusterChatbot/n=1000000/' -benchtime 1x
func BenchmarkClusterChatbot(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("n=%d/single", n), func(b *testing.B) {
			if n > 100_000 && testing.Short() {
				b.Skip("1M skipped in -short mode")
			}
			b.ReportAllocs()
			var sum metrics.Summary
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				sum = runChatbotSingle(b, n)
			}
			cpu := cpuSeconds() - cpu0
			b.ReportMetric(float64(n)*float64(b.N)/cpu, "sim-req/cpu-s")
			if sum.CompletedRequests != int64(n) {
				b.Fatalf("completed %d of %d", sum.CompletedRequests, n)
			}
		})
		for _, c := range []struct {
			insts  int
			policy RoutingPolicy
		}{{1, RoundRobin}, {16, RoundRobin}, {16, LeastLoaded}, {16, Weighted}} {
			b.Run(fmt.Sprintf("n=%d/instances=%d/%s", n, c.insts, c.policy), func(b *testing.B) {
				if n > 100_000 && testing.Short() {
					b.Skip("1M skipped in -short mode")
				}
				b.ReportAllocs()
				b.StopTimer()
				base := cpuSeconds()
				runChatbotSingle(b, n)
				base = cpuSeconds() - base
				b.StartTimer()
				var out Outcome
				var sum metrics.Summary
				start, cpu0 := time.Now(), cpuSeconds()
				for i := 0; i < b.N; i++ {
					sum, out = runChatbotCluster(b, n, c.insts, c.policy)
				}
				wall, cpu := time.Since(start).Seconds(), cpuSeconds()-cpu0
				b.ReportMetric(float64(n)*float64(b.N)/wall, "sim-req/s")
				b.ReportMetric(float64(n)*float64(b.N)/cpu, "sim-req/cpu-s")
				b.ReportMetric(cpu/float64(b.N)/base, "x-single")
				b.ReportMetric(100*float64(out.Counters.FastSteps)/float64(max(1, out.Counters.Steps)), "inline-%")
				b.ReportMetric(float64(out.Counters.Steps)/float64(n), "steps/req")
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

// BenchmarkClusterFlowControl is BenchmarkClusterChatbot's 4-instance
// workload at twice its capacity (56 req/s per instance) with a third of
// the requests critical, a third standard and a third sheddable, without a
// gateway (plain), behind flow control in priority order (every request
// served), and with a TTL, queue shedding and in-flight eviction besides
// (requests wait at every moment at this load: the 1 ms dispatch tick
// runs throughout, skipped where it cannot change anything, and at every
// period with eviction). x-plain is the CPU time
// per run over that of a plain run made right before it; the target is
// at most 1.5.
//
//	go test ./internal/des/cluster -run '^$' -bench ClusterFlowControl -benchtime 3x
func BenchmarkClusterFlowControl(b *testing.B) {
	const n, insts = 20_000, 4
	gw := Gateway{FlowControl: true, DispatchOrder: OrderPriority, TTLUs: 10_000_000, MaxQueueDepth: 2000,
		QueueShedding: true, InFlightEviction: true}
	run := func(g Gateway) (metrics.Summary, Outcome) {
		ic := destest.ChatbotInstance(b, true)
		cfg := Config{SnapshotRefreshUs: 50_000, CacheSignalDelayUs: 50_000, Seed: 42, Gateway: g}
		for i := 0; i < insts; i++ {
			cfg.Instances = append(cfg.Instances, ic)
		}
		agg, _ := metrics.NewAggregator(map[string]metrics.SLOTarget{metrics.AnyClass: {TTFTMs: 2000}})
		src := &destest.Source{Rng: rand.New(rand.NewPCG(42, 28)), N: n, MeanGapUs: 1e6 / (56 * float64(insts)), Lengths: destest.ChatbotLengths}
		classes := []string{"critical", "standard", "sheddable"}
		c, err := New(cfg, tieredSource{src, classes}, sim.SinkFunc(func(res *instance.Result, r *instance.Request) {
			agg.Add(res)
			src.Recycle(r)
		}))
		if err != nil {
			b.Fatal(err)
		}
		out, err := c.Run()
		if err != nil {
			b.Fatal(err)
		}
		return agg.Summary(out.Info), out
	}
	cases := map[string]Gateway{"plain": {}, "flow-control": {FlowControl: true, DispatchOrder: OrderPriority}, "flow-control-shedding": gw}
	for _, name := range []string{"plain", "flow-control", "flow-control-shedding"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.StopTimer()
			base := cpuSeconds()
			run(Gateway{})
			base = cpuSeconds() - base
			b.StartTimer()
			g := cases[name]
			var sum metrics.Summary
			var out Outcome
			cpu0 := cpuSeconds()
			for i := 0; i < b.N; i++ {
				sum, out = run(g)
			}
			cpu := cpuSeconds() - cpu0
			b.ReportMetric(float64(n)*float64(b.N)/cpu, "sim-req/cpu-s")
			b.ReportMetric(cpu/float64(b.N)/base, "x-plain")
			b.ReportMetric(sum.PerClass["critical"].TTFTP99Ms, "critical-ttft-p99-ms")
			b.ReportMetric(float64(out.Shed+out.Expired+out.Evicted), "let-go")
		})
	}
}

// tieredSource gives the requests of src the classes in turn.
type tieredSource struct {
	src     *destest.Source
	classes []string
}

func (s tieredSource) Next() (*instance.Request, error) {
	r, err := s.src.Next()
	if r != nil {
		r.SLOClass = s.classes[r.ID%int64(len(s.classes))]
	}
	return r, err
}
