package deploy

import (
	"fmt"
	"time"

	"servesim/internal/des/cluster"
	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

// Cluster is the part of a deployment beyond one instance (simulator.md
// §10, §12). YAML keys are the flag names with underscores; durations are
// Go durations ("50ms").
type Cluster struct {
	AdmissionPolicy         string        `yaml:"admission_policy"`      // always-admit, token-bucket, reject-all
	TokenBucketCapacity     float64       `yaml:"token_bucket_capacity"` // tokens
	TokenBucketRefill       float64       `yaml:"token_bucket_refill"`   // tokens per second
	AdmissionLatency        time.Duration `yaml:"admission_latency"`
	RoutingLatency          time.Duration `yaml:"routing_latency"`
	RoutingPolicy           string        `yaml:"routing_policy"`
	RoutingScorers          string        `yaml:"routing_scorers"` // weighted: name:weight,...
	SnapshotRefreshInterval time.Duration `yaml:"snapshot_refresh_interval"`
	CacheSignalDelay        time.Duration `yaml:"cache_signal_delay"`

	PrefillInstances      int           `yaml:"prefill_instances"`
	DecodeInstances       int           `yaml:"decode_instances"`
	PDDecider             string        `yaml:"pd_decider"` // never, always, prefix-threshold
	PDPrefixThreshold     int           `yaml:"pd_prefix_threshold"`
	PDTransferBandwidth   float64       `yaml:"pd_transfer_bandwidth"` // GB/s
	PDTransferBaseLatency time.Duration `yaml:"pd_transfer_base_latency"`
	PDTransferContention  bool          `yaml:"pd_transfer_contention"`
}

func defaultCluster() Cluster {
	return Cluster{
		AdmissionPolicy:         string(cluster.AlwaysAdmit),
		TokenBucketCapacity:     10000,
		TokenBucketRefill:       1000,
		RoutingPolicy:           string(cluster.RoundRobin),
		RoutingScorers:          cluster.DefaultScorers,
		SnapshotRefreshInterval: 50 * time.Millisecond,
		CacheSignalDelay:        50 * time.Millisecond,
		PDDecider:               string(cluster.DecideNever),
		PDPrefixThreshold:       16,
		PDTransferBandwidth:     25,
		PDTransferBaseLatency:   50 * time.Microsecond,
	}
}

// check validates the cluster fields, naming each by its flag.
func (c Cluster) check(instances int) []string {
	var errs []string
	switch cluster.AdmissionPolicy(c.AdmissionPolicy) {
	case cluster.AlwaysAdmit, cluster.RejectAll:
	case cluster.TokenBucket:
		if !(c.TokenBucketCapacity > 0) || c.TokenBucketRefill < 0 {
			errs = append(errs, fmt.Sprintf("token-bucket-capacity %g must be positive and token-bucket-refill %g not negative",
				c.TokenBucketCapacity, c.TokenBucketRefill))
		}
	default:
		errs = append(errs, fmt.Sprintf("admission-policy %q: want always-admit, token-bucket or reject-all", c.AdmissionPolicy))
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"admission-latency", c.AdmissionLatency}, {"routing-latency", c.RoutingLatency},
		{"snapshot-refresh-interval", c.SnapshotRefreshInterval}, {"cache-signal-delay", c.CacheSignalDelay},
		{"pd-transfer-base-latency", c.PDTransferBaseLatency}} {
		if d.v < 0 {
			errs = append(errs, fmt.Sprintf("%s %v must not be negative", d.name, d.v))
		}
	}
	known := false
	for _, p := range cluster.RoutingPolicies() {
		known = known || string(p) == c.RoutingPolicy
	}
	if !known {
		errs = append(errs, fmt.Sprintf("routing-policy %q: want round-robin, random, least-loaded, least-outstanding, always-busiest or weighted", c.RoutingPolicy))
	}
	if c.RoutingPolicy == string(cluster.Weighted) {
		if _, err := cluster.ParseScorers(c.RoutingScorers); err != nil {
			errs = append(errs, fmt.Sprintf("routing-scorers %q: %v", c.RoutingScorers, err))
		}
	}
	switch cluster.Decider(c.PDDecider) {
	case cluster.DecideNever, cluster.DecideAlways, cluster.DecidePrefixThreshold:
	default:
		errs = append(errs, fmt.Sprintf("pd-decider %q: want never, always or prefix-threshold", c.PDDecider))
	}
	if c.PrefillInstances < 0 || c.DecodeInstances < 0 {
		errs = append(errs, "prefill-instances and decode-instances must not be negative")
	} else if p, d := c.PrefillInstances, c.DecodeInstances; p > 0 || d > 0 {
		switch {
		case p == 0 || d == 0:
			errs = append(errs, fmt.Sprintf("prefill-instances %d and decode-instances %d: P/D needs both pools", p, d))
		case instances != 1 && instances != p+d:
			errs = append(errs, fmt.Sprintf("num-instances %d must equal prefill-instances + decode-instances = %d", instances, p+d))
		}
	} else if c.PDDecider != string(cluster.DecideNever) && c.PDDecider != "" {
		errs = append(errs, fmt.Sprintf("pd-decider %s needs prefill-instances and decode-instances", c.PDDecider))
	}
	if c.PDPrefixThreshold < 0 {
		errs = append(errs, fmt.Sprintf("pd-prefix-threshold %d must not be negative", c.PDPrefixThreshold))
	}
	if !(c.PDTransferBandwidth > 0) {
		errs = append(errs, fmt.Sprintf("pd-transfer-bandwidth %g GB/s must be positive", c.PDTransferBandwidth))
	}
	return errs
}

// IsCluster reports whether the deployment needs the cluster simulator:
// several instances, or admission, latencies or P/D that one plain
// instance does not have.
func (r *Resolved) IsCluster() bool {
	c := r.Config.Cluster
	return r.Instances > 1 || c.AdmissionPolicy != string(cluster.AlwaysAdmit) ||
		c.AdmissionLatency > 0 || c.RoutingLatency > 0 || c.PrefillInstances > 0
}

// resolveCluster fills Resolved.ClusterConfig: one instance configuration per
// instance, policies, latencies in µs, and the P/D transfer model.
func (r *Resolved) resolveCluster() error {
	c := r.Config.Cluster
	if c.PrefillInstances > 0 {
		r.Instances = c.PrefillInstances + c.DecodeInstances
	}
	cc := cluster.Config{
		Admission:          cluster.AdmissionPolicy(c.AdmissionPolicy),
		BucketCapacity:     c.TokenBucketCapacity,
		BucketRefillPerSec: c.TokenBucketRefill,
		AdmissionLatencyUs: c.AdmissionLatency.Microseconds(),
		RoutingLatencyUs:   c.RoutingLatency.Microseconds(),
		Routing:            cluster.RoutingPolicy(c.RoutingPolicy),
		SnapshotRefreshUs:  c.SnapshotRefreshInterval.Microseconds(),
		CacheSignalDelayUs: c.CacheSignalDelay.Microseconds(),
	}
	if cc.Routing == cluster.Weighted {
		cc.Scorers, _ = cluster.ParseScorers(c.RoutingScorers)
	}
	if c.PrefillInstances > 0 {
		if r.ModelConfig == nil {
			return invalid("deployment: P/D needs the model's config for the KV bytes to transfer; give --model")
		}
		cc.PD = cluster.PD{PrefillInstances: c.PrefillInstances, Decider: cluster.Decider(c.PDDecider),
			PrefixThreshold: c.PDPrefixThreshold, BandwidthBytesPerUs: c.PDTransferBandwidth * 1e3,
			BaseLatencyUs: c.PDTransferBaseLatency.Microseconds(), Contention: c.PDTransferContention,
			KVBytesPerToken: latency.KVBytesPerTokenPerGPU(r.ModelConfig, r.TP)}
	}
	cc.Instances = make([]instance.Config, r.Instances)
	for i := range cc.Instances {
		cc.Instances[i] = r.Instance
		cc.Instances[i].ID = i
	}
	r.ClusterConfig = cc
	return nil
}
