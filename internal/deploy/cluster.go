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

	// The gateway (cluster.Gateway): tier-aware admission, tenant budgets
	// and flow control; SLO-class priorities come from class_priorities.
	TierShedThreshold     int           `yaml:"tier_shed_threshold"`
	TierShedMinPriority   int           `yaml:"tier_shed_min_priority"`
	QueueDepthThreshold   float64       `yaml:"queue_depth_threshold"`
	KVCacheUtilThreshold  float64       `yaml:"kv_cache_util_threshold"`
	TenantBudgets         string        `yaml:"tenant_budgets"` // tenant:share,...
	FlowControl           bool          `yaml:"flow_control"`
	SaturationDetector    string        `yaml:"saturation_detector"`
	GatewayMaxConcurrency int           `yaml:"gateway_max_concurrency"`
	DispatchOrder         string        `yaml:"dispatch_order"`
	FairnessPolicy        string        `yaml:"fairness_policy"`
	PerBandCapacity       int           `yaml:"per_band_capacity"`
	MaxGatewayQueueDepth  int           `yaml:"max_gateway_queue_depth"`
	QueueShedding         bool          `yaml:"queue_shedding"`
	DispatchTickInterval  time.Duration `yaml:"dispatch_tick_interval"`
	GatewayTTL            time.Duration `yaml:"gateway_ttl"`
	InFlightEviction      bool          `yaml:"in_flight_eviction"`
	SLOTargets            string        `yaml:"slo_targets"` // class=duration,...

	PrefillInstances      int           `yaml:"prefill_instances"`
	DecodeInstances       int           `yaml:"decode_instances"`
	PDDecider             string        `yaml:"pd_decider"` // never, always, prefix-threshold
	PDPrefixThreshold     int           `yaml:"pd_prefix_threshold"`
	PDTransferBandwidth   float64       `yaml:"pd_transfer_bandwidth"` // GB/s
	PDTransferBaseLatency time.Duration `yaml:"pd_transfer_base_latency"`
	PDTransferContention  bool          `yaml:"pd_transfer_contention"`

	// EncodeInstances is the encode pool's size: requests with image,
	// audio or video tokens have them encoded there, one pass each timed
	// as their prefill on the deployment's GPU, before routing; 0 = none.
	EncodeInstances int `yaml:"encode_instances" json:",omitempty"`
	// EncodeMaxTokens is the most media tokens one encode pass takes; a
	// request with more is rejected at the encode stage (0 = no bound).
	EncodeMaxTokens int `yaml:"encode_max_tokens" json:",omitempty"`
	// EncodeGPU and EncodeTP are the encoders' GPU and tensor parallelism
	// ("" and 0: the base deployment's).
	EncodeGPU string `yaml:"encode_gpu" json:",omitempty"`
	EncodeTP  int    `yaml:"encode_tensor_parallel" json:",omitempty"`
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
		TierShedMinPriority:     cluster.DefaultTierShedMinPri,
		QueueDepthThreshold:     cluster.DefaultQDThreshold,
		KVCacheUtilThreshold:    cluster.DefaultKVThreshold,
		SaturationDetector:      cluster.DetectUtilization,
		GatewayMaxConcurrency:   cluster.DefaultMaxConcurrency,
		DispatchOrder:           cluster.OrderFIFO,
		FairnessPolicy:          cluster.FairGlobalStrict,
		DispatchTickInterval:    cluster.DefaultDispatchTickUs * time.Microsecond,
	}
}

// IsCluster reports whether the deployment needs the cluster simulator:
// several instances, or admission, latencies or P/D that one plain
// instance does not have.
func (r *Resolved) IsCluster() bool {
	c := r.Config.Cluster
	return r.Instances > 1 || c.AdmissionPolicy != string(cluster.AlwaysAdmit) ||
		c.AdmissionLatency > 0 || c.RoutingLatency > 0 || c.PrefillInstances > 0 || c.EncodeInstances > 0 ||
		c.FlowControl || c.TenantBudgets != "" || c.FleetFile != ""
}

// resolveCluster fills Resolved.ClusterConfig: one instance configuration per
// instance, policies, latencies in µs, and the P/D transfer model.
func (r *Resolved) resolveCluster() error {
	c := r.Config.Cluster
	var err error
	if r.pools, err = resolvePools(r.given); err != nil {
		return err
	}
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
	cc.Gateway = cluster.Gateway{Priorities: r.ClassPriorities,
		TierShedThreshold: c.TierShedThreshold, TierShedMinPriority: c.TierShedMinPriority,
		QDThreshold: c.QueueDepthThreshold, KVThreshold: c.KVCacheUtilThreshold,
		FlowControl: c.FlowControl, Detector: c.SaturationDetector, MaxConcurrency: c.GatewayMaxConcurrency,
		DispatchOrder: c.DispatchOrder, Fairness: c.FairnessPolicy, PerBandCapacity: c.PerBandCapacity,
		MaxQueueDepth: c.MaxGatewayQueueDepth, QueueShedding: c.QueueShedding,
		DispatchTickUs: c.DispatchTickInterval.Microseconds(), TTLUs: c.GatewayTTL.Microseconds(),
		InFlightEviction: c.InFlightEviction}
	cc.Gateway.TenantBudgets, _ = cluster.ParseTenantBudgets(c.TenantBudgets)
	cc.Gateway.SLOTargetsUs, _ = cluster.ParseSLOTargets(c.SLOTargets)
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
			KVBytesPerToken: latency.KVBytesPerTokenPerGPU(r.ModelConfig, r.PoolConfig("prefill").TP)}
	}
	if c.EncodeInstances > 0 {
		cc.Encode = cluster.Encode{Instances: c.EncodeInstances, MaxTokens: c.EncodeMaxTokens, Latency: r.Instance.Latency}
		if p := r.pools["encode"]; p != nil {
			cc.Encode.Latency = p.Instance.Latency
		}
	}
	cc.Instances = make([]instance.Config, r.Instances)
	for i := range cc.Instances {
		cc.Instances[i] = r.Instance
		switch {
		case c.PrefillInstances == 0:
		case i < c.PrefillInstances && r.pools["prefill"] != nil:
			cc.Instances[i] = r.pools["prefill"].Instance
		case i >= c.PrefillInstances && r.pools["decode"] != nil:
			cc.Instances[i] = r.pools["decode"].Instance
		}
		cc.Instances[i].ID = i
	}
	if c.FleetFile != "" {
		f, err := r.checkedFleet(&cc, nil)
		if err != nil {
			return err
		}
		cc.Fleet = f
	}
	r.ClusterConfig = cc
	return r.checkPoolsMemory(availableMemory())
}

// PoolConfig is the resolved deployment of the named P/D pool's instances:
// the pool's own when it has overrides, else the base's.
func (r *Resolved) PoolConfig(pool string) Config {
	if p := r.pools[pool]; p != nil {
		return p.Config
	}
	return r.Config
}
