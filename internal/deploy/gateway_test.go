package deploy

import (
	"strings"
	"testing"
)

// TestGatewayYAML: every gateway key decodes from YAML and lands in the
// resolved cluster configuration, the class priorities with them; a
// deployment with flow control or tenant budgets is a cluster.
func TestGatewayYAML(t *testing.T) {
	y := `admission_policy: gaie-legacy
tier_shed_threshold: 3
tier_shed_min_priority: 0
queue_depth_threshold: 8
kv_cache_util_threshold: 0.9
tenant_budgets: alice:0.3,bob:0.7
flow_control: true
saturation_detector: concurrency
gateway_max_concurrency: 32
dispatch_order: slo-deadline
fairness_policy: round-robin
per_band_capacity: 50
max_gateway_queue_depth: 200
queue_shedding: true
dispatch_tick_interval: 2ms
gateway_ttl: 3s
in_flight_eviction: true
slo_targets: critical=100ms,standard=1s
class_priorities: {batch: 0}
`
	c, err := Decode("dep.yaml", []byte(y), Default())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(c)
	if err != nil {
		t.Fatal(err)
	}
	g := r.ClusterConfig.Gateway
	if r.ClusterConfig.Admission != "gaie-legacy" || g.TierShedThreshold != 3 || g.TierShedMinPriority != 0 || g.QDThreshold != 8 ||
		g.KVThreshold != 0.9 || g.TenantBudgets["alice"] != 0.3 || g.TenantBudgets["bob"] != 0.7 || !g.FlowControl ||
		g.Detector != "concurrency" || g.MaxConcurrency != 32 || g.DispatchOrder != "slo-deadline" || g.Fairness != "round-robin" ||
		g.PerBandCapacity != 50 || g.MaxQueueDepth != 200 || !g.QueueShedding || g.DispatchTickUs != 2000 || g.TTLUs != 3_000_000 ||
		!g.InFlightEviction || g.SLOTargetsUs["critical"] != 100_000 || g.SLOTargetsUs["standard"] != 1_000_000 || g.Priorities["batch"] != 0 {
		t.Errorf("gateway %+v", g)
	}
	if !r.IsCluster() {
		t.Error("a deployment behind flow control is not a cluster")
	}
	if d, _ := Resolve(Default()); d.ClusterConfig.Gateway.TierShedMinPriority != 3 || d.ClusterConfig.Gateway.QDThreshold != 5 ||
		d.ClusterConfig.Gateway.KVThreshold != 0.8 || d.ClusterConfig.Gateway.DispatchTickUs != 1000 {
		t.Errorf("defaults %+v, want llm-d's", d.ClusterConfig.Gateway)
	}
}

// TestGatewayErrors: a bad gateway value is refused where it is written,
// with exit code 2.
func TestGatewayErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"dispatch_order: lifo\n", `dep.yaml:1:17: key dispatch_order: "lifo": want fifo, priority or slo-deadline`},
		{"fairness_policy: lottery\n", `dep.yaml:1:18: key fairness_policy: "lottery": want global-strict or round-robin`},
		{"saturation_detector: vibes\n", `dep.yaml:1:22: key saturation_detector: "vibes": want utilization, concurrency or never`},
		{"tenant_budgets: a:2\n", `dep.yaml:1:17: key tenant_budgets: "a:2": tenant "a": share "2" must be a number in [0, 1]`},
		{"slo_targets: critical=-1s\n", `dep.yaml:1:14: key slo_targets: "critical=-1s"`},
		{"kv_cache_util_threshold: 1.5\n", `dep.yaml:1:26: key kv_cache_util_threshold: 1.5 must lie in (0, 1]`},
		{"queue_depth_threshold: 0\n", `dep.yaml:1:24: key queue_depth_threshold: 0 must be a positive finite number`},
		{"per_band_capacity: -1\n", `dep.yaml:1:20: key per_band_capacity: -1 must not be negative`},
		{"dispatch_tick_interval: 0s\n", `dep.yaml:1:25: key dispatch_tick_interval: 0s must lie in [1µs, 1h]`},
		{"gateway_ttl: -1s\n", `dep.yaml:1:14: key gateway_ttl: -1s must not be negative`},
		{"admission_policy: tier-shedding\n", `dep.yaml:1:19: key admission_policy: "tier-shedding"`},
		{"in_flight_eviction: true\n", `in-flight-eviction needs flow-control`},
		{"flow_control: true\nencode_instances: 1\n", `encode-instances does not work with flow-control`},
		{"fleet_file: f.yaml\nadmission_policy: gaie-legacy\n", `fleet-file does not work with the gateway`},
		{"fleet_file: f.yaml\nencode_instances: 2\n", `fleet-file does not work with the gateway`},
	} {
		c, err := Decode("dep.yaml", []byte(tc.yaml), Default())
		if err == nil {
			_, err = Resolve(c)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.yaml, err, tc.want)
			continue
		}
		if ec, ok := err.(interface{ ExitCode() int }); !ok || ec.ExitCode() != 2 {
			t.Errorf("%v: want exit code 2", err)
		}
	}
}
