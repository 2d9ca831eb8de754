package deploy

import (
	"slices"

	"servesim/internal/flagspec"
)

// PolicyFileFlag is the flag that names a policy bundle: one YAML file of
// the deployment's policy keys (policyKeys), BLIS's --policy-config. It
// lays over the --deployment file and under the flags.
const PolicyFileFlag = "policy-config"

// schedulingPolicyKeys are the keys outside the cluster's category that
// belong to the policy bundle: how each instance orders, prioritises and
// preempts its requests.
var schedulingPolicyKeys = []string{"scheduler", "preemption_policy", "preempt_mode", "priority_policy",
	"priority_age_weight", "class_priorities"}

// isPolicy reports whether k belongs to the policy bundle: every key of
// the cluster's category (admission, gateway and routing, whatever keys it
// gains) and the instances' scheduling policies. The bundle holds no
// placement, KV cache, batching or P/D key: those describe the hardware
// and the engine, not the decisions taken on requests.
func (k key) isPolicy() bool {
	return k.category == flagspec.CatCluster || slices.Contains(schedulingPolicyKeys, k.name)
}

// policyKeys is the keys of the policy bundle, in keyList's order.
func policyKeys() []key {
	var out []key
	for _, k := range keyList() {
		if k.isPolicy() {
			out = append(out, k)
		}
	}
	return out
}

// PolicyKeyNames lists the policy bundle's keys, sorted.
func PolicyKeyNames() []string {
	var names []string
	for _, k := range policyKeys() {
		names = append(names, k.name)
	}
	slices.Sort(names)
	return names
}

func policyFileFlag() flagspec.Flag {
	return flagspec.Flag{Name: PolicyFileFlag, Category: flagspec.CatCluster, Kind: flagspec.String,
		Usage: "policy bundle YAML: admission, routing and scorers, priority, scheduler and preemption keys (the deployment's policy keys) over --deployment, under the flags"}
}
