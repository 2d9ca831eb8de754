package deploy

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"servesim/internal/exitcode"
)

func yamlValue(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

const staticOne = "node_pools:\n  - {name: a, gpu_type: H100, gpus_per_node: 2, initial_nodes: 1, min_nodes: 1, max_nodes: 4, cost_per_hour: 8}\n"

// TestFleetInitialNodesHoldInstances: --num-instances sizes a fleet whose
// file names fewer initial nodes, up to max_nodes, and no further.
func TestFleetInitialNodesHoldInstances(t *testing.T) {
	c := Default()
	c.FleetFile = fleetFile(t, staticOne)
	c.Instances = 5 // TP 1 on 2-GPU nodes: 3 nodes
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	if p := r.ClusterConfig.Fleet.Pools[0]; p.InitialNodes != 3 || p.MinNodes != 1 || p.MaxNodes != 4 {
		t.Fatalf("pool %+v, want 3 initial nodes (min 1, max 4)", p)
	}
	c.Instances = 9 // 5 nodes: more than max_nodes
	if _, err := Resolve(c); err == nil || !strings.Contains(err.Error(), "fewer than the 9 instances") || exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("9 instances on at most 4 nodes of 2: %v", err)
	}
}

// TestSetFleet: settings replace the file's keys, in every pool, create
// the keys the file leaves out, and leave a static fleet static.
func TestSetFleet(t *testing.T) {
	c := Default()
	c.FleetFile = fleetFile(t, phase2)
	c.Instances = 2
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	set := []FleetSetting{
		{Path: "autoscaler.max_replicas", Value: yamlValue(t, "3")},
		{Path: "autoscaler.analyzer.scale_up_threshold", Value: yamlValue(t, "0.6")},
		{Path: "node_pools.max_nodes", Value: yamlValue(t, "7")},
		{Path: "instance_lifecycle.loading_delay.mean", Value: yamlValue(t, "60")},
		{Path: "report_interval_s", Value: yamlValue(t, "30")},
	}
	if err := r.SetFleet(set); err != nil {
		t.Fatal(err)
	}
	f := r.ClusterConfig.Fleet
	if f.Autoscaler.MaxReplicas != 3 || f.Autoscaler.Analyzer.ScaleUpThreshold != 0.6 || f.Pools[0].MaxNodes != 7 ||
		f.Lifecycle.Loading.MeanUs != 60_000_000 || f.Lifecycle.Loading.StddevUs != 30_000_000 || f.ReportUs != 30_000_000 {
		t.Fatalf("fleet %+v, autoscaler %+v", f, f.Autoscaler)
	}
	c.FleetFile = fleetFile(t, staticOne)
	if r, err = Resolve(c); err != nil {
		t.Fatal(err)
	}
	if err := r.SetFleet(set[:1]); err != nil || r.ClusterConfig.Fleet.Autoscaler != nil {
		t.Fatalf("a static fleet stays static: %v %+v", err, r.ClusterConfig.Fleet.Autoscaler)
	}
	bad := []FleetSetting{{Path: "node_pools.max_nodes", Value: yamlValue(t, "lots")}}
	if err := r.SetFleet(bad); err == nil || !strings.Contains(err.Error(), `"lots" is not an integer`) {
		t.Fatalf("a value of the wrong type: %v", err)
	}
	if err := CheckFleetSetting(FleetSetting{Path: "autoscaler.max_replica"}); err == nil || !strings.Contains(err.Error(), `did you mean "autoscaler.max_replicas"`) {
		t.Fatalf("unknown key: %v", err)
	}
	if err := CheckFleetSetting(FleetSetting{Path: "instance_lifecycle.loading_delay"}); err == nil {
		t.Fatal("a mapping is not a key to set")
	}
	if err := CheckFleetSetting(FleetSetting{Path: "node_pools.max_nodes", Value: yamlValue(t, "lots")}); err == nil || err.Error() != `"lots": want an integer` {
		t.Fatalf("a value of the wrong type: %v", err)
	}
	if err := CheckFleetSetting(FleetSetting{Path: "instance_lifecycle.drain_policy", Value: yamlValue(t, "WAIT")}); err != nil {
		t.Fatal(err)
	}
}
