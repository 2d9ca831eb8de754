package replay

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/workload"
)

// BenchmarkDayAutoscaled simulates a day of traffic (1.2M requests at
// 14 req/s, 23.8 h, prompts of 2048 tokens and outputs of 512) on an autoscaled fleet of Qwen3-14B H100 replicas that
// load for 4 minutes, and reports simulated requests per wall second and
// the wall seconds per simulated day (docs/fleet.md: under a minute on one
// core).
func BenchmarkDayAutoscaled(b *testing.B) {
	fleet := filepath.Join(b.TempDir(), "fleet.yaml")
	if err := os.WriteFile(fleet, []byte(`node_pools:
  - {name: h100, gpu_type: H100, gpus_per_node: 1, initial_nodes: 1, min_nodes: 1, max_nodes: 8, cost_per_hour: 4}
instance_lifecycle:
  loading_delay: {mean: 240, stddev: 30}
  warm_start_initial_instances: true
autoscaler:
  interval_us: 30000000
  scale_up_stabilization_window_us: 240000000
  scale_down_stabilization_window_us: 240000000
`), 0o644); err != nil {
		b.Fatal(err)
	}
	n, rate, in, inSD, out, outSD := int64(1_200_000), 14.0, 2048, 512, 512, 128
	cfg := deploy.Default()
	cfg.FleetFile = fleet
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		wl, err := workload.Resolve(workload.Options{NumRequests: &n, Rate: &rate, PromptTokens: &in,
			PromptTokensStdev: &inSD, OutputTokens: &out, OutputTokensStdev: &outSD})
		if err != nil {
			b.Fatal(err)
		}
		res, err := SimulateWorkload(context.Background(), WorkloadConfig(wl, dep), wl, nil)
		if err != nil {
			b.Fatal(err)
		}
		f := res.Summary.Fleet
		if s := res.Summary; s.CompletedRequests+s.TimedOutRequests != n || f == nil || f.ScaleUps == 0 {
			s := res.Summary
			b.Fatalf("completed %d of %d (rejected %d dropped %d queued %d running %d timed out %d), fleet given %v, scale-ups %d", s.CompletedRequests, n, s.RejectedRequests, s.DroppedUnservable, s.StillQueued, s.StillRunning, s.TimedOutRequests, f != nil, f.ScaleUps)
		}
		if i == 0 {
			b.Logf("simulated %.1f h: %d scale-ups, %d scale-downs, peak %d replicas, %.1f GPU-hours, TTFT p99 %.0f ms",
				res.Summary.VLLMEstimatedDurationS/3600, f.ScaleUps, f.ScaleDowns, f.PeakReplicas, f.GPUHours, res.Summary.TTFTP99Ms)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "requests/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "wall-s/day")
}
