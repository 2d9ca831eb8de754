package deploy

import (
	"time"

	"servesim/internal/des/cluster"
	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

// Cluster is the part of a deployment beyond one instance (docs/simulator.md
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

	FleetFile string `yaml:"fleet_file" json:",omitempty"` // node pools, lifecycle, autoscaler (fleet.go); left out of fingerprints when empty
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

// IsCluster reports whether the deployment needs the cluster simulator:
// several instances, or admission, latencies or P/D that one plain
// instance does not have.
func (r *Resolved) IsCluster() bool {
	c := r.Config.Cluster
	return r.Instances > 1 || c.AdmissionPolicy != string(cluster.AlwaysAdmit) ||
		c.AdmissionLatency > 0 || c.RoutingLatency > 0 || c.PrefillInstances > 0 || c.FleetFile != ""
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
	if c.FleetFile != "" {
		f, err := r.ReadFleet(c.FleetFile)
		if err != nil {
			return err
		}
		if err := f.Check(&cc); err != nil {
			return invalid("%s: %v", c.FleetFile, err)
		}
		cc.Fleet = f
	}
	r.ClusterConfig = cc
	return nil
}
