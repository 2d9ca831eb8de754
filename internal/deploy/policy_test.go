package deploy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"servesim/internal/flagspec"
)

// TestPolicyBundleLayers: the bundle lays over the deployment file and
// under the flags (BLIS's configuration reference, "Configuration
// Precedence": CLI flags over the policy-config YAML over the defaults).
func TestPolicyBundleLayers(t *testing.T) {
	dir := t.TempDir()
	dep, pol := dir+"/d.yaml", dir+"/p.yaml"
	writeFile(t, dep, "max_num_seqs: 64\nrouting_policy: least-loaded\nscheduler: sjf\nadmission_policy: reject-all\n")
	writeFile(t, pol, "routing_policy: weighted\nrouting_scorers: precise-prefix-cache:2,no-hit-lru:1\nscheduler: priority-fcfs\n"+
		"preemption_policy: priority\nadmission_policy: token-bucket\ntoken_bucket_capacity: 5000\nclass_priorities: {batch: 0}\n")
	l, err := NewLayers(dep, flagspec.Values{PolicyFileFlag: pol, "admission-policy": "always-admit"})
	if err != nil {
		t.Fatal(err)
	}
	got, given, err := l.apply(Default())
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxNumSeqs != 64 || got.RoutingPolicy != "weighted" || got.RoutingScorers != "precise-prefix-cache:2,no-hit-lru:1" ||
		got.Scheduler != "priority-fcfs" || got.PreemptionPolicy != "priority" || got.AdmissionPolicy != "always-admit" ||
		got.TokenBucketCapacity != 5000 || got.ClassPriorities["batch"] != 0 || len(got.ClassPriorities) != 1 {
		t.Errorf("layers: %+v", got)
	}
	byPol := "--" + PolicyFileFlag + " " + pol
	want := map[string]string{"max_num_seqs": "--deployment " + dep, "routing_policy": byPol, "routing_scorers": byPol,
		"scheduler": byPol, "preemption_policy": byPol, "admission_policy": "--admission-policy",
		"token_bucket_capacity": byPol, "class_priorities": byPol}
	if !reflect.DeepEqual(given, want) {
		t.Errorf("given %v, want %v", given, want)
	}
	// Recorded like the rest of the deployment: the trace header's keys.
	keys, _ := got.Keys()
	if keys["routing_scorers"] != "precise-prefix-cache:2,no-hit-lru:1" || keys["scheduler"] != "priority-fcfs" {
		t.Errorf("keys: routing_scorers %v scheduler %v", keys["routing_scorers"], keys["scheduler"])
	}
}

// TestPolicyBundleErrors: one located line for each bad bundle.
func TestPolicyBundleErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ yaml, want string }{
		{"routing_polcy: weighted\n", `p.yaml:1:1: unknown key "routing_polcy"`},
		{"max_num_seqs: 8\n", "p.yaml:1:1: max_num_seqs is a deployment key, not a policy one: give it in --deployment or as a flag"},
		{"routing_policy: weighted\nrouting_policy: random\n", "p.yaml:2:1"},
		{"admission_policy: token-bucket\ntoken_bucket_capacity: 0\n", "p.yaml:2:"},
		{"- routing_policy\n", "p.yaml:1:1"},
	} {
		path := dir + "/p.yaml"
		writeFile(t, path, tc.yaml)
		l, err := NewLayers("", flagspec.Values{PolicyFileFlag: path})
		if err != nil {
			t.Fatal(err)
		}
		_, err = l.On(Default())
		if err == nil || !strings.HasPrefix(err.Error(), dir+"/"+tc.want) && !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: a message of several lines: %v", tc.yaml, err)
		}
	}
	if _, err := NewLayers("", flagspec.Values{PolicyFileFlag: dir + "/none.yaml"}); err == nil || !strings.HasPrefix(err.Error(), "policy bundle: open ") {
		t.Errorf("a missing bundle: %v", err)
	}
}

// TestPolicyKeys: the bundle holds the cluster's keys (admission, routing,
// scorers) and the instances' scheduling policies, nothing of the hardware.
func TestPolicyKeys(t *testing.T) {
	names := PolicyKeyNames()
	for _, n := range []string{"admission_policy", "token_bucket_capacity", "routing_policy", "routing_scorers",
		"scheduler", "preemption_policy", "priority_policy", "class_priorities"} {
		if !slices.Contains(names, n) {
			t.Errorf("%s is not a policy key (%v)", n, names)
		}
	}
	for _, n := range []string{"model", "gpu", "max_num_seqs", "total_kv_blocks", "prefill_instances", "num_instances"} {
		if slices.Contains(names, n) {
			t.Errorf("%s is a policy key", n)
		}
	}
}
