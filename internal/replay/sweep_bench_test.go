package replay

import (
	"context"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/sweep"
)

// benchmarkSweep runs a sweep of 10k-request chatbot runs on every core,
// as `run sweep` does, and reports the wall time per sweep and the
// simulated requests per second of wall time.
func benchmarkSweep(b *testing.B, find string, grid ...string) {
	spec := sweep.NewSpec()
	for _, g := range grid {
		ax, err := sweep.ParseGridFlag(g)
		if err != nil {
			b.Fatal(err)
		}
		spec.Axes = append(spec.Axes, ax)
	}
	spec.SLO, _ = sweep.ParseSLO("ttft.p99<500ms,itl.p99<50ms")
	spec.SetFind(find)
	g, err := spec.Check(RateKey)
	if err != nil {
		b.Fatal(err)
	}
	sw := &Sweeper{Deploy: deploy.Default(), Grid: g, SLO: spec.SLO, Workload: chatbot(10_000, 1), Searching: find == sweep.FindMaxRate}
	if err := sw.Check(); err != nil {
		b.Fatal(err)
	}
	var runs, requests int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := &sweep.Plan{Spec: spec, Grid: g, ProbeRate: 1e6}
		rows, err := p.Run(context.Background(), sw.Run)
		if err != nil {
			b.Fatal(err)
		}
		runs += int64(len(rows))
		for _, r := range rows {
			requests += r.Injected
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/sweep")
	b.ReportMetric(float64(runs)/float64(b.N), "runs/sweep")
	b.ReportMetric(float64(requests)/b.Elapsed().Seconds(), "requests/s")
}

// BenchmarkSweep100 has a target: 100 cases (1 to 4 H100s × 25
// rates from light load to twice the capacity of the smallest) of
// 10k-request chatbot runs in under 30 s on 2 cores.
func BenchmarkSweep100(b *testing.B) {
	benchmarkSweep(b, "", "num_instances=1..4", "rate=10..250:10")
}

// BenchmarkMaxRate is the other target: one deployment's max rate under
// ttft.p99<500ms,itl.p99<50ms in under 5 s on 2 cores.
func BenchmarkMaxRate(b *testing.B) {
	benchmarkSweep(b, sweep.FindMaxRate)
}
