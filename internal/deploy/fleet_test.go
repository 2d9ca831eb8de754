package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/des/cluster"
	"servesim/internal/exitcode"
)

func fleetFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const phase2 = `node_pools:
  - name: h100-tp1
    gpu_type: H100
    gpus_per_node: 1
    gpu_memory_gib: 80.0
    initial_nodes: 5
    min_nodes: 0
    max_nodes: 5
    cost_per_hour: 4.5
    provisioning_delay: {mean: 30, stddev: 5}
instance_lifecycle:
  loading_delay: {mean: 240.0, stddev: 30.0}
  warm_up_request_count: 5
  warm_up_ttft_factor: 2.0
  drain_policy: REDIRECT
autoscaler:
  interval_us: 30000000
  scale_up_stabilization_window_us: 240000000
  scale_down_stabilization_window_us: 240000000
  hpa_scrape_delay: {mean: 15, stddev: 0}
  analyzer:
    kv_cache_threshold: 0.8
    scale_up_threshold: 0.8
    scale_down_boundary: 0.4
    avg_input_tokens: 512.0
`

// TestFleetFile: BLIS's policy-bundle keys become the cluster's fleet, in
// µs, at the deployment's tensor parallelism, checked against its instances.
func TestFleetFile(t *testing.T) {
	c := Default()
	c.FleetFile = fleetFile(t, phase2)
	c.Instances = 2
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	f := r.ClusterConfig.Fleet
	if !r.IsCluster() || f == nil {
		t.Fatalf("a fleet file gives a cluster with a fleet: %v %v", r.IsCluster(), f)
	}
	p := f.Pools[0]
	want := cluster.NodePool{Name: "h100-tp1", GPU: "H100", GPUsPerNode: 1, TP: 1, InitialNodes: 5, MaxNodes: 5, CostPerHour: 4.5,
		Provision: cluster.Delay{MeanUs: 30_000_000, StddevUs: 5_000_000}}
	if p != want {
		t.Fatalf("pool %+v, want %+v", p, want)
	}
	if l := f.Lifecycle; l != (cluster.Lifecycle{Loading: cluster.Delay{MeanUs: 240_000_000, StddevUs: 30_000_000}, WarmUpRequests: 5,
		WarmUpFactor: 2, Drain: cluster.DrainRedirect, ColdStart: true}) {
		t.Fatalf("lifecycle %+v", l)
	}
	a := f.Autoscaler
	if a.IntervalUs != 30_000_000 || a.UpWindowUs != 240_000_000 || a.ActuationDelayUs != 15_000_000 || a.MinReplicas != 1 ||
		a.Analyzer.ScaleDownBoundary != 0.4 || a.Analyzer.AvgInputTokens != 512 {
		t.Fatalf("autoscaler %+v", a)
	}
	// TP 2 on one-GPU nodes holds no replica: refused before the run.
	c.TP = 2
	if _, err := Resolve(c); err == nil || !strings.Contains(err.Error(), "1 GPUs per node must be at least 1 and hold TP 2") {
		t.Fatalf("TP 2 on 1-GPU nodes: %v", err)
	}
}

func TestFleetFileErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"node_pools:\n  - name: a\n    gpu_typ: H100\n", `fleet.yaml:3:5: node_pools[0]: unknown key "gpu_typ" (did you mean "gpu_type"?)`},
		{"node_pools:\n  - name: a\n    max_nodes: lots\n", `fleet.yaml:3:16: "lots" is not an integer`},
		{"instance_lifecycle:\n  drain_policy: WAIT\n  drain_policy: WAIT\n", `fleet.yaml:3:3: instance_lifecycle: key "drain_policy" is given twice`},
		{"node_pools:\n  - {name: a, gpu_type: H100, gpus_per_node: 1, initial_nodes: 0, max_nodes: 0}\n", "fewer than the 1 instances"},
		{"node_pools:\n  - {name: a, gpu_type: H100, gpus_per_node: 1, initial_nodes: 1, max_nodes: 2}\ninstance_lifecycle: {drain_policy: SOON}\n", `unknown drain policy "soon" (wait, redirect, immediate)`},
		{"node_pools:\n  - {name: a, gpu_type: H100, gpus_per_node: 1, initial_nodes: 1, max_nodes: 2}\ninstance_lifecycle: {loading_delay: {mean: -1}}\n", "loading_delay: mean -1 s"},
	} {
		c := Default()
		c.FleetFile = fleetFile(t, tc.body)
		_, err := Resolve(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("%q: err %v (exit %d), want %q, exit 2", tc.body, err, exitcode.Of(err), tc.want)
		}
	}
}
