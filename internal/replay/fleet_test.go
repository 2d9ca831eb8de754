package replay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/des/metrics"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

func runWorkload(t *testing.T, dep *deploy.Resolved, scale float64, slo bool) (Outcome, map[int64]int64) {
	t.Helper()
	n, rate, in, out := int64(300), 40.0, 256, 64
	wl, err := workload.Resolve(workload.Options{NumRequests: &n, Rate: &rate, PromptTokens: &in, OutputTokens: &out})
	if err != nil {
		t.Fatal(err)
	}
	cfg := WorkloadConfig(wl, dep)
	cfg.TimeScale = scale
	if slo {
		cfg.SLOTargets = map[string]metrics.SLOTarget{metrics.AnyClass: {TTFTMs: 200}}
	}
	arrivals := map[int64]int64{}
	res, err := SimulateWorkload(context.Background(), cfg, wl, func(rec *tracev2.Record, _ *tracev2.SimResult) error {
		arrivals[rec.RequestID] = rec.ArrivalTimeUs
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res, arrivals
}

// TestTimeScale: --time-scale 2 doubles every arrival time of a workload.
func TestTimeScale(t *testing.T) {
	dep, err := deploy.Resolve(deploy.Default())
	if err != nil {
		t.Fatal(err)
	}
	_, base := runWorkload(t, dep, 0, false)
	_, slow := runWorkload(t, dep, 2, false)
	if len(base) != 300 || len(slow) != 300 {
		t.Fatalf("%d and %d results", len(base), len(slow))
	}
	for id, at := range base {
		if slow[id] != 2*at {
			t.Fatalf("request %d: arrival %d at scale 2, want %d", id, slow[id], 2*at)
		}
	}
}

// TestFleetSummary: a fleet run's summary carries the fleet, whose buckets
// count every request once and whose cost is its GPU-hours at the node
// price; the text and JSON summaries show it.
func TestFleetSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(path, []byte(`node_pools:
  - {name: h100, gpu_type: H100, gpus_per_node: 1, initial_nodes: 2, min_nodes: 2, max_nodes: 2, cost_per_hour: 3}
report_interval_s: 2
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := deploy.Default()
	cfg.FleetFile, cfg.Instances = path, 2
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := runWorkload(t, dep, 0, true)
	f := res.Summary.Fleet
	if f == nil || f.BucketS != 2 || f.PeakReplicas != 2 {
		t.Fatalf("fleet %+v", f)
	}
	var arrivals, completed int64
	var dollars float64
	for _, b := range f.OverTime {
		arrivals, completed, dollars = arrivals+b.Arrivals, completed+b.Completed, dollars+b.Dollars
		if b.Arrivals > 0 && b.SLOAttainment == nil {
			t.Errorf("bucket at %v s: no attainment with an SLO", b.StartS)
		}
	}
	dur := res.Summary.VLLMEstimatedDurationS
	if arrivals != 300 || completed != res.Summary.CompletedRequests || !near(f.GPUHours, 2*dur/3600) || !near(f.Dollars, 3*f.GPUHours) || !near(dollars, f.Dollars) {
		t.Fatalf("arrivals %d completed %d, GPU-hours %v over %v s, dollars %v (buckets %v)", arrivals, completed, f.GPUHours, dur, f.Dollars, dollars)
	}
	tok := float64(res.Summary.TotalInputTokens+res.Summary.TotalOutputTokens) / 1e6
	if f.DollarsPerMillionTokens == nil || !near(*f.DollarsPerMillionTokens, f.Dollars/tok) {
		t.Fatalf("dollars per million tokens %v, want %v", f.DollarsPerMillionTokens, f.Dollars/tok)
	}
	var js strings.Builder
	if err := WriteSummary(&js, "json", &res.Summary); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Fleet metrics.FleetSummary `json:"fleet"`
	}
	if err := json.Unmarshal([]byte(js.String()), &back); err != nil || back.Fleet.GPUHours != f.GPUHours {
		t.Fatalf("JSON fleet %+v (%v)", back.Fleet, err)
	}
	if txt := TextSummary(&res.Summary); !strings.Contains(txt, "\nfleet      ") || !strings.Contains(txt, "TTFT p99 ms") {
		t.Fatalf("text summary without the fleet:\n%s", txt)
	}
	page := FleetHTML(&res.Summary)
	if n := strings.Count(page, "<svg"); n != 3 || !strings.Contains(page, "GPU-hours") || strings.Count(page, "<tr>") != len(f.OverTime)+1 {
		t.Fatalf("fleet page: %d charts, %d rows for %d buckets", n, strings.Count(page, "<tr>"), len(f.OverTime))
	}
}

func near(a, b float64) bool { return a == b || (a-b)/max(a, b) < 1e-9 && (b-a)/max(a, b) < 1e-9 }
