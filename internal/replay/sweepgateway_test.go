package replay

import (
	"testing"

	"servesim/internal/deploy"
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
