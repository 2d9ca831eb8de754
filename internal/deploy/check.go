package deploy

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"servesim/internal/des/cluster"
	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/latency"
)

// problem is one invalid value. key is the YAML key of the field the
// problem is about alone ("" when it is about a combination of fields);
// msg then says what is wrong with its value ("0 must be positive"), or,
// for a combination, the whole sentence.
type problem struct {
	key, msg string
	// keys are the YAML keys of a combination's fields, for its place.
	keys []string
}

// text names the problem by its flag: "max-num-seqs 0 must be positive".
func (p problem) text() string {
	if p.key == "" {
		return p.msg
	}
	return strings.ReplaceAll(p.key, "_", "-") + " " + p.msg
}

// check validates the numbers and names a user typed, naming each by its
// flag; a deployment file's values are checked with their place by Decode.
func (c Config) check() error {
	ps := c.problems()
	if len(ps) == 0 {
		return nil
	}
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = p.text()
	}
	return invalid("deployment: %s", strings.Join(texts, "; "))
}

// problems lists every invalid value of c, the fields alone first.
func (c Config) problems() []problem {
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{key: key, msg: fmt.Sprintf(format, args...)})
	}
	positive := func(key string, v int) {
		if v <= 0 {
			add(key, "%d must be positive", v)
		}
	}
	nonNeg := func(key string, v int) {
		if v < 0 {
			add(key, "%d must not be negative", v)
		}
	}
	positive("tensor_parallel", c.TP)
	positive("data_parallel", c.DataParallel)
	if c.DataParallel > MaxDataParallel {
		add("data_parallel", "%d exceeds %d", c.DataParallel, MaxDataParallel)
	}
	positive("num_instances", c.Instances)
	for _, n := range []struct {
		key string
		v   int
	}{{"num_instances", c.Instances}, {"prefill_instances", c.PrefillInstances}, {"decode_instances", c.DecodeInstances}} {
		if n.v > maxInstances {
			add(n.key, "%d exceeds %d, the most instances one simulation holds", n.v, maxInstances)
		}
	}
	if c.TotalKVBlocks > kvcache.MaxBlocks {
		add("total_kv_blocks", "%d exceeds %d, the most a KV cache can hold", c.TotalKVBlocks, kvcache.MaxBlocks)
	}
	positive("block_size", c.BlockSize)
	if c.BlockSize > maxBlockSize {
		add("block_size", "%d exceeds %d tokens", c.BlockSize, maxBlockSize)
	}
	nonNeg("max_num_seqs", c.MaxNumSeqs)
	nonNeg("max_num_batched_tokens", c.MaxNumBatchedTokens)
	nonNeg("max_cudagraph_capture_size", c.MaxCUDAGraphCaptureSize)
	nonNeg("total_kv_blocks", c.TotalKVBlocks)
	nonNeg("max_model_len", c.MaxModelLen)
	nonNeg("long_prefill_token_threshold", c.LongPrefillTokenThreshold)
	nonNeg("kv_cpu_blocks", c.KVCPUBlocks)
	positive("chunk_size", c.ChunkSize)
	positive("pipeline_parallel", c.PipelineParallel)
	if !(c.GPUMemoryUtilization > 0 && c.GPUMemoryUtilization <= 1) {
		add("gpu_memory_utilization", "%g must be in (0, 1]", c.GPUMemoryUtilization)
	}
	for _, f := range []struct {
		key      string
		v        float64
		positive bool
		unit     string
	}{{"kv_cpu_bandwidth", c.KVCPUBandwidth, false, "tokens/µs"}, {"pp_interconnect_bandwidth", c.PPInterconnectBandwidth, true, "GB/s"},
		{"priority_age_weight", c.PriorityAgeWeight, false, "per second"}} {
		switch {
		case math.IsNaN(f.v) || math.IsInf(f.v, 0):
			add(f.key, "%g must be a finite number", f.v)
		case f.positive && !(f.v > 0):
			add(f.key, "%g %s must be positive", f.v, f.unit)
		case f.v < 0:
			add(f.key, "%g %s must not be negative", f.v, f.unit)
		}
	}
	if !(c.KVOffloadThreshold >= 0 && c.KVOffloadThreshold <= 1) {
		add("kv_offload_threshold", "%g must be in [0, 1]", c.KVOffloadThreshold)
	}
	if c.KVCPUBaseLatencyUs < 0 {
		add("kv_cpu_base_latency_us", "%d must not be negative", c.KVCPUBaseLatencyUs)
	}
	for _, f := range []struct {
		key string
		v   []float64
	}{{"alpha_coeffs", c.AlphaCoeffs}, {"beta_coeffs", c.BetaCoeffs}} {
		for i, x := range f.v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				add(f.key, "value %d (%g) must be a finite number", i+1, x)
				break
			}
		}
	}
	if !(c.StepTimeSigma >= 0 && c.StepTimeSigma <= latency.MaxStepTimeSigma) {
		add("step_time_sigma", "%g is outside [0, %g]", c.StepTimeSigma, latency.MaxStepTimeSigma)
	}
	if _, err := latency.ParseKind(c.LatencyModel); err != nil {
		add("latency_model", "%q: %v", c.LatencyModel, err)
	}
	ps = append(ps, c.choices()...)
	for _, class := range slices.Sorted(maps.Keys(c.ClassPriorities)) {
		if v := c.ClassPriorities[class]; v < -100 || v > 100 {
			add("class_priorities", "%d of class %q is outside [-100, 100]", v, class)
		}
	}
	ps = append(ps, c.Cluster.problems()...)
	ps = append(ps, c.poolProblems()...)
	ps = append(ps, c.combinations()...)
	return ps
}

// choices checks the fields that name one of a few variants.
func (c Config) choices() []problem {
	var ps []problem
	for _, f := range []struct {
		key, v string
		want   []string
	}{
		{"batching", c.Batching, names(instance.BatchingVariants())},
		{"scheduler", c.Scheduler, names([]instance.Scheduler{instance.SchedFCFS, instance.SchedPriorityFCFS, instance.SchedSJF})},
		{"preemption_policy", c.PreemptionPolicy, names([]instance.PreemptionPolicy{instance.PreemptFCFS, instance.PreemptPriority})},
		{"preempt_mode", c.PreemptMode, names([]instance.PreemptMode{instance.ModeRecompute, instance.ModeReset})},
		{"priority_policy", c.PriorityPolicy, names([]instance.PriorityPolicy{instance.PrioritySLOClass, instance.PriorityConstant, instance.PrioritySLOAging})},
		{"admission_policy", c.AdmissionPolicy, names(cluster.AdmissionPolicies())},
		{"saturation_detector", c.SaturationDetector, cluster.Detectors()},
		{"dispatch_order", c.DispatchOrder, cluster.DispatchOrders()},
		{"fairness_policy", c.FairnessPolicy, cluster.FairnessPolicies()},
		{"routing_policy", c.RoutingPolicy, names(cluster.RoutingPolicies())},
		{"pd_decider", c.PDDecider, names([]cluster.Decider{cluster.DecideNever, cluster.DecideAlways, cluster.DecidePrefixThreshold})},
	} {
		ok := false
		for _, w := range f.want {
			ok = ok || w == f.v
		}
		if !ok {
			ps = append(ps, problem{key: f.key, msg: fmt.Sprintf("%q: want %s", f.v, orList(f.want))})
		}
	}
	return ps
}

// names turns a list of string-typed names into strings.
func names[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// orList is "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// problems checks the cluster fields that stand alone.
func (c Cluster) problems() []problem {
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{key: key, msg: fmt.Sprintf(format, args...)})
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"admission_latency", c.AdmissionLatency}, {"routing_latency", c.RoutingLatency},
		{"snapshot_refresh_interval", c.SnapshotRefreshInterval}, {"cache_signal_delay", c.CacheSignalDelay},
		{"pd_transfer_base_latency", c.PDTransferBaseLatency}} {
		if d.v < 0 {
			add(d.key, "%v must not be negative", d.v)
		}
	}
	// Checked whatever the policy, so that a value is valid or not alone
	// (SetKey, a sweep's grid) and not only once weighted routing is chosen.
	if _, err := cluster.ParseScorers(c.RoutingScorers); err != nil {
		add("routing_scorers", "%q: %v", c.RoutingScorers, err)
	}
	ps = append(ps, c.gatewayProblems()...)
	if c.PrefillInstances < 0 {
		add("prefill_instances", "%d must not be negative", c.PrefillInstances)
	}
	if c.DecodeInstances < 0 {
		add("decode_instances", "%d must not be negative", c.DecodeInstances)
	}
	if c.EncodeInstances < 0 || c.EncodeInstances > maxInstances {
		add("encode_instances", "%d must be in [0, %d]", c.EncodeInstances, maxInstances)
	}
	if c.EncodeMaxTokens < 0 {
		add("encode_max_tokens", "%d must not be negative", c.EncodeMaxTokens)
	}
	if c.EncodeTP < 0 {
		add("encode_tensor_parallel", "%d must not be negative (0 = the base deployment's)", c.EncodeTP)
	}
	if c.PDPrefixThreshold < 0 {
		add("pd_prefix_threshold", "%d must not be negative", c.PDPrefixThreshold)
	}
	if !(c.PDTransferBandwidth > 0) || math.IsInf(c.PDTransferBandwidth, 0) {
		add("pd_transfer_bandwidth", "%g GB/s must be a positive finite number", c.PDTransferBandwidth)
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"token_bucket_capacity", c.TokenBucketCapacity}, {"token_bucket_refill", c.TokenBucketRefill}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			add(f.key, "%g must be a finite number, not negative", f.v)
		}
	}
	return ps
}

// combinations checks the fields that must agree with each other.
func (c Config) combinations() []problem {
	var ps []problem
	add := func(keys []string, format string, args ...any) {
		ps = append(ps, problem{msg: fmt.Sprintf(format, args...), keys: keys})
	}
	if (len(c.AlphaCoeffs) == 0) != (len(c.BetaCoeffs) == 0) {
		add([]string{"alpha_coeffs", "beta_coeffs"}, "alpha-coeffs and beta-coeffs must be given together")
	}
	if c.PipelineParallel > 1 && c.Batching != string(instance.BatchVLLM) {
		add([]string{"pipeline_parallel", "batching"}, "pipeline-parallel %d runs with batching vllm only, not %s", c.PipelineParallel, c.Batching)
	}
	if c.PipelineParallel > c.MaxNumSeqs && c.MaxNumSeqs > 0 {
		add([]string{"pipeline_parallel", "max_num_seqs"}, "pipeline-parallel %d exceeds max-num-seqs %d", c.PipelineParallel, c.MaxNumSeqs)
	}
	if c.AdmissionPolicy == string(cluster.TokenBucket) && !(c.TokenBucketCapacity > 0) {
		add([]string{"admission_policy", "token_bucket_capacity"}, "token-bucket admission needs token-bucket-capacity > 0, got %g", c.TokenBucketCapacity)
	}
	if c.InFlightEviction && !c.FlowControl {
		add([]string{"in_flight_eviction", "flow_control"}, "in-flight-eviction needs flow-control")
	}
	if c.FleetFile != "" && (c.FlowControl || c.TenantBudgets != "" || c.EncodeInstances > 0 ||
		c.AdmissionPolicy == string(cluster.TierShed) || c.AdmissionPolicy == string(cluster.GAIELegacy)) {
		add([]string{"fleet_file", "flow_control"}, "fleet-file does not work with the gateway (flow-control, tenant-budgets, tier-shed or gaie-legacy admission) or encode-instances: they do not follow instances that come and go")
	}
	if c.FlowControl && c.EncodeInstances > 0 {
		add([]string{"encode_instances", "flow_control"}, "encode-instances does not work with flow-control (the gateway queue dispatches straight to routing)")
	}
	if c.InFlightEviction && (c.PrefillInstances > 0 || c.DecodeInstances > 0) {
		add([]string{"in_flight_eviction", "prefill_instances"}, "in-flight-eviction does not work with P/D")
	}
	pd := []string{"prefill_instances", "decode_instances"}
	if p, d := c.PrefillInstances, c.DecodeInstances; p > 0 || d > 0 {
		switch {
		case p == 0 || d == 0:
			add(pd, "prefill-instances %d and decode-instances %d: P/D needs both pools", p, d)
		case c.Instances != 1 && c.Instances != p+d:
			add(append(pd, "num_instances"), "num-instances %d must equal prefill-instances + decode-instances = %d", c.Instances, p+d)
		}
	} else if c.PDDecider != string(cluster.DecideNever) && c.PDDecider != "" {
		add(append(pd, "pd_decider"), "pd-decider %s needs prefill-instances and decode-instances", c.PDDecider)
	}
	return append(ps, c.poolCombinations()...)
}

// gatewayProblems checks the gateway's keys that stand alone.
func (c Cluster) gatewayProblems() []problem {
	var ps []problem
	add := func(key, format string, args ...any) {
		ps = append(ps, problem{key: key, msg: fmt.Sprintf(format, args...)})
	}
	for _, f := range []struct {
		key string
		v   int
	}{{"tier_shed_threshold", c.TierShedThreshold},
		{"per_band_capacity", c.PerBandCapacity}, {"max_gateway_queue_depth", c.MaxGatewayQueueDepth}} {
		if f.v < 0 {
			add(f.key, "%d must not be negative", f.v)
		}
	}
	if !(c.QueueDepthThreshold > 0) || math.IsInf(c.QueueDepthThreshold, 0) {
		add("queue_depth_threshold", "%g must be a positive finite number", c.QueueDepthThreshold)
	}
	if !(c.KVCacheUtilThreshold > 0 && c.KVCacheUtilThreshold <= 1) {
		add("kv_cache_util_threshold", "%g must lie in (0, 1]", c.KVCacheUtilThreshold)
	}
	if !(c.GatewayMaxConcurrency > 0) {
		add("gateway_max_concurrency", "%d must be positive", c.GatewayMaxConcurrency)
	}
	if c.DispatchTickInterval < time.Microsecond || c.DispatchTickInterval > time.Hour {
		add("dispatch_tick_interval", "%v must lie in [1µs, 1h]", c.DispatchTickInterval)
	}
	if c.GatewayTTL < 0 {
		add("gateway_ttl", "%v must not be negative", c.GatewayTTL)
	}
	if _, err := cluster.ParseTenantBudgets(c.TenantBudgets); err != nil {
		add("tenant_budgets", "%q: %v", c.TenantBudgets, err)
	}
	if _, err := cluster.ParseSLOTargets(c.SLOTargets); err != nil {
		add("slo_targets", "%q: %v", c.SLOTargets, err)
	}
	return ps
}
