package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"servesim/internal/testkit/destest"
	"syscall"
	"testing"
	"time"

	"servesim/internal/des/instance"
	"servesim/internal/des/metrics"
)

// chatbotConfig is the benchmarks' reference deployment (destest.ChatbotInstance).
func chatbotConfig(tb testing.TB, ff bool) Config {
	return Config{Instance: destest.ChatbotInstance(tb, ff)}
}

// chatbotSource: Poisson arrivals at 28 req/s, input 512±128 and output
// 256±64 tokens (normal, clipped to ≥ 1), generated lazily.
func chatbotSource(n int, seed uint64) *destest.Source {
	return &destest.Source{Rng: rand.New(rand.NewPCG(seed, 28)), N: n, MeanGapUs: 1e6 / 28, Lengths: destest.ChatbotLengths}
}

func runChatbot(tb testing.TB, n int, ff, hashed bool) (metrics.Summary, Outcome, uint64) {
	agg, _ := metrics.NewAggregator(nil)
	var peak uint64
	var ms runtime.MemStats
	k := 0
	src := chatbotSource(n, 42)
	src.Shared = hashed
	sink := SinkFunc(func(res *instance.Result, r *instance.Request) {
		agg.Add(res)
		src.Recycle(r)
		if k++; k%50000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	})
	s, err := New(chatbotConfig(tb, ff), src, sink)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := s.Run()
	if err != nil {
		tb.Fatal(err)
	}
	sum := agg.Summary(out.Info)
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapAlloc)
	return sum, out, peak
}

// BenchmarkChatbot is the reference chatbot workload near saturation, with the number
// of requests as a parameter (10k, 100k, 1M: run the large ones with
// -benchtime=1x). It reports simulated requests per wall-second and per
// CPU-second, the peak live heap (MB), the share of steps run inline and the
// steps per request. Modes: ff (fast-forward), noff (the reference step),
// hashed (fast-forward with the prompts' privacy undeclared, so every KV
// block is hashed and indexed, as in a workload whose prompts might be
// shared).
//
//	go test ./internal/des/sim -run '^$' -bench Chatbot -benchtime 1x -benchmem
func BenchmarkChatbot(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		for _, mode := range []string{"ff", "noff", "hashed"} {
			b.Run(fmt.Sprintf("n=%d/%s", n, mode), func(b *testing.B) {
				if n > 10_000 && testing.Short() {
					b.Skip("large sizes skipped in -short mode")
				}
				ff, hashed := mode != "noff", mode == "hashed"
				b.ReportAllocs()
				var out Outcome
				var peak uint64
				var sum metrics.Summary
				start := time.Now()
				cpu0 := cpuSeconds()
				for i := 0; i < b.N; i++ {
					sum, out, peak = runChatbot(b, n, ff, hashed)
				}
				wall := time.Since(start).Seconds()
				cpu := cpuSeconds() - cpu0
				b.ReportMetric(float64(n)*float64(b.N)/wall, "sim-req/s")
				// On a shared machine wall time counts other processes' load;
				// process CPU time (all threads, GC included) does not.
				b.ReportMetric(float64(n)*float64(b.N)/cpu, "sim-req/cpu-s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(100*float64(out.Counters.FastSteps)/float64(max(1, out.Counters.Steps)), "inline-%")
				b.ReportMetric(float64(out.Counters.Steps)/float64(n), "steps/req")
				if sum.CompletedRequests != int64(n) {
					b.Fatalf("completed %d of %d", sum.CompletedRequests, n)
				}
			})
		}
	}
}

// TestChatbotSanity: the benchmark workload is near saturation, and
// neither fast-forward nor the prompts' privacy declaration changes its
// summary.
func TestChatbotSanity(t *testing.T) {
	a, oa, _ := runChatbot(t, 2000, true, false)
	b, ob, _ := runChatbot(t, 2000, false, false)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("summaries differ with fast-forward:\n%+v\n%+v", a, b)
	}
	if c, _, _ := runChatbot(t, 2000, true, true); !reflect.DeepEqual(a, c) {
		t.Errorf("summaries differ with every block hashed:\n%+v\n%+v", a, c)
	}
	t.Logf("2000 chatbot requests: TTFT mean %.1f ms, ITL mean %.2f ms, E2E mean %.0f ms, KV util %.2f (peak %.2f), %.1f%% of %d steps lazy, %d preemptions",
		a.TTFTMeanMs, a.ITLMeanMs, a.E2EMeanMs, a.KVUtilizationMean, a.KVUtilizationPeak,
		100*float64(oa.Counters.LazySteps)/float64(oa.Counters.Steps), oa.Counters.Steps, ob.Counters.Preemptions)
}

// cpuSeconds is the process's user + system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
