package replay

import (
	"testing"

	"servesim/internal/deploy"
	"servesim/internal/des/metrics"
	"servesim/internal/sweep"
)

// TestGatewaySettingsAreSweepKeys: every key of the policy bundle
// (admission, routing and scorers, scheduling) is a sweep key, and a grid
// sets it as a deployment file would.
func TestGatewaySettingsAreSweepKeys(t *testing.T) {
	for _, k := range deploy.PolicyKeyNames() {
		if !isDeployKey(k) {
			t.Errorf("policy key %s is not a sweep key", k)
		}
	}
	for _, tc := range []struct {
		grid string
		got  func(deploy.Config) string
		want []string
	}{
		{"admission_policy=always-admit,token-bucket,reject-all", func(c deploy.Config) string { return c.AdmissionPolicy },
			[]string{"always-admit", "token-bucket", "reject-all"}},
		{`routing_scorers=["precise-prefix-cache:2,no-hit-lru:1", "queue-depth:1"]`, func(c deploy.Config) string { return c.RoutingScorers },
			[]string{"precise-prefix-cache:2,no-hit-lru:1", "queue-depth:1"}},
		{"scheduler=fcfs,priority-fcfs", func(c deploy.Config) string { return c.Scheduler }, []string{"fcfs", "priority-fcfs"}},
	} {
		ax, err := sweep.ParseGridFlag(tc.grid)
		if err != nil {
			t.Fatal(err)
		}
		if len(ax.Values) != len(tc.want) {
			t.Fatalf("%s: %d values, want %d", tc.grid, len(ax.Values), len(tc.want))
		}
		for i, v := range ax.Values {
			cfg, err := applyDeployKey(deploy.Default(), ax.Key, v)
			if err != nil || tc.got(cfg) != tc.want[i] {
				t.Errorf("%s value %d: got %q, %v; want %q", tc.grid, i, tc.got(cfg), err, tc.want[i])
			}
		}
	}
	ax, err := sweep.ParseGridFlag("token_bucket_refill=fast")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applyDeployKey(deploy.Default(), ax.Key, ax.Values[0]); err == nil {
		t.Error("a refill that is not a number is accepted")
	}
}

// TestClassRows: a sweep row carries the workload's SLO classes (for the
// SLO's class bounds) when the workload names some, with the requests the
// gateway let go of each; a workload of one unnamed or default class has
// none.
func TestClassRows(t *testing.T) {
	per := map[string]metrics.ClassSummary{
		"critical":  {Count: 10, Completed: 9, TTFTP99Ms: 450, ITLMeanMs: 12, E2EP99Ms: 3000},
		"sheddable": {Count: 20, Completed: 5, GatewayCounts: metrics.GatewayCounts{Rejected: 3, Shed: 4, Expired: 6, Evicted: 2}},
	}
	got := classRows(per)
	if c := got["critical"]; len(got) != 2 || c.Count != 10 || c.Completed != 9 || c.TTFTP99 != 450 || c.ITLMean != 12 || c.E2EP99 != 3000 || c.LetGo != 0 {
		t.Errorf("critical: %+v (of %d classes)", c, len(got))
	}
	if s := got["sheddable"]; s.LetGo != 15 {
		t.Errorf("sheddable let go %d, want 3+4+6+2", s.LetGo)
	}
	for _, one := range []string{"", "default"} {
		if r := classRows(map[string]metrics.ClassSummary{one: {Count: 5}}); r != nil {
			t.Errorf("one %q class: %v, want none", one, r)
		}
	}
	if r := classRows(map[string]metrics.ClassSummary{"critical": {Count: 5}}); len(r) != 1 {
		t.Errorf("one named class: %v", r)
	}
}

// TestFlagSLOTargetsByClass: for run and replay, --slo's class bounds are
// per-request bounds on that class's requests (goodput's definition), on
// top of the bounds every request has.
func TestFlagSLOTargetsByClass(t *testing.T) {
	got, err := FlagSLOTargets("ttft.p99<2s,critical:ttft.p99<500ms,critical:e2e.p99<9s,batch:ttft.p99<5s")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]metrics.SLOTarget{
		metrics.AnyClass: {TTFTMs: 2000},
		"critical":       {TTFTMs: 500, E2EMs: 9000},
		"batch":          {TTFTMs: 2000}, // the looser class bound does not loosen the common one
	}
	if len(got) != len(want) {
		t.Fatalf("targets %+v, want %+v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q: %+v, want %+v", k, got[k], w)
		}
	}
}
