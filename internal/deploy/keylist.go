package deploy

import (
	"fmt"
	"slices"

	"servesim/internal/des/cluster"
	"servesim/internal/des/latency"
	"servesim/internal/flagspec"
)

// key is one setting of a deployment, and everything said about it: its
// YAML key (the flag is the same with dashes), the other names users type
// for it, its help, and the Config field it sets. Flags, their aliases, the
// YAML keys of a deployment file, the trace header's x_ext.deployment and
// the comparison of two deployments are all generated from keyList.
type key struct {
	name string
	// aliases are the other names users type by habit, BLIS's (hardware,
	// tp, max_num_running_reqs, ...) and vLLM's (tensor_parallel_size,
	// ...): YAML keys as they are, flags with dashes.
	aliases     []string
	usage       string // the flag's help; "" = a YAML-only key (no flag)
	category    string // the --help heading
	defaultText string // the default --help shows instead of the value
	// negation is the help of --no-FLAG, vLLM's way to turn off what is
	// on by default; "" = no such flag.
	negation string
	// choices are the values the key takes, for the flag's completion
	// (nil: any).
	choices func() []string
	// omitZero leaves the key out of Keys (trace headers, summaries) at
	// its zero value: a key added late, that deployments without it never
	// showed.
	omitZero bool
	// omitDefault leaves the key out of Keys at its default value (Default):
	// a key added late with a default other than zero.
	omitDefault bool
	// field is the Config field the key sets, as a pointer: *string, *int,
	// *int64, *float64, *bool, **bool (unset = derived), *time.Duration,
	// *[]float64 (a comma-separated flag) or *map[string]int (YAML only).
	field func(*Config) any
}

// keyList is every deployment key, in the order --help lists their flags.
// Validation of the values is check.go's (problems).
func keyList() []key {
	return slices.Concat(placementKeys(), kvKeys(), batchingKeys(), clusterKeys(), gatewayKeys(), pdKeys(), poolKeys(), fleetKeys())
}

// placementKeys are the keys of the model, the GPUs and their parallelism, the latency model.
func placementKeys() []key {
	dep := flagspec.CatDeployment
	return []key{
		{name: "model", category: dep, usage: "model: an embedded name (see --list-models), a HuggingFace id, or a config.json path",
			field: func(c *Config) any { return &c.Model }},
		{name: "gpu", aliases: []string{"hardware"}, category: dep, usage: "GPU: H100, A100-SXM (A100-80), L40S, or a name in --hardware-file",
			field: func(c *Config) any { return &c.GPU }},
		{name: "hardware_file", aliases: []string{"hardware_config"}, category: dep, usage: "GPU specs JSON (hardware_config.json format)",
			field: func(c *Config) any { return &c.HardwareFile }},
		{name: "tensor_parallel", aliases: []string{"tp", "tensor_parallel_size"}, category: dep, usage: "tensor-parallel degree",
			field: func(c *Config) any { return &c.TP }},
		{name: "data_parallel", aliases: []string{"dp", "data_parallel_size"}, category: dep,
			usage: "data-parallel ranks stepping in lockstep as one instance (with a mixture of experts: expert parallelism); physics model only",
			field: func(c *Config) any { return &c.DataParallel }},
		{name: "pipeline_parallel", aliases: []string{"pp", "pipeline_parallel_size"}, category: dep, usage: "pipeline stages per instance (micro-batches in flight)",
			field: func(c *Config) any { return &c.PipelineParallel }},
		{name: "pp_interconnect_bandwidth", category: dep, usage: "pipeline parallelism: activation bandwidth between stages, GB/s",
			field: func(c *Config) any { return &c.PPInterconnectBandwidth }},
		{name: "num_instances", category: dep, usage: "instances (replicas)",
			field: func(c *Config) any { return &c.Instances }},
		{name: "latency_model", category: dep, usage: "physics (a roofline with a knee whose coefficients are shares of the GPU's peaks), trained-physics (BLIS's), roofline (BLIS's analytic) or blackbox (linear)",
			choices: func() []string { return names(latency.Kinds()) },
			field:   func(c *Config) any { return &c.LatencyModel }},
		{name: "alpha_coeffs", category: dep, usage: "comma-separated α coefficients (with --beta-coeffs)",
			field: func(c *Config) any { return &c.AlphaCoeffs }},
		{name: "beta_coeffs", category: dep, usage: "comma-separated β coefficients (with --alpha-coeffs)",
			field: func(c *Config) any { return &c.BetaCoeffs }},
		{name: "step_time_sigma", category: dep, omitZero: true,
			usage:       "relative uncertainty σ of the latency model's step times, for the 90% intervals of sweep --interval and replay --interval (calibrate fit writes the fit's)",
			defaultText: "0.19 for physics, 0.20 for the others",
			field:       func(c *Config) any { return &c.StepTimeSigma }},
		{name: "quantization", category: dep,
			usage: "vLLM's --quantization: fp8 (one byte a weight, GEMMs at the FP8 rate), awq, gptq, marlin, bitsandbytes (4 bits a weight); empty = as the model config says",
			field: func(c *Config) any { return &c.Quantization }},
		{name: "vllm_version", category: dep, usage: "the vLLM release the deployment models; decides asynchronous scheduling",
			defaultText: DefaultVLLMVersion + ", or " + BLISVLLMVersion + " with BLIS's latency models",
			field:       func(c *Config) any { return &c.VLLMVersion }},
	}
}

// kvKeys are the keys of the KV cache.
func kvKeys() []key {
	kv := flagspec.CatKVCache
	return []key{
		{name: "total_kv_blocks", category: kv, usage: "KV cache blocks per instance; 0 = from GPU memory",
			field: func(c *Config) any { return &c.TotalKVBlocks }},
		{name: "gpu_memory_utilization", category: kv, usage: "share of GPU memory vLLM may use",
			field: func(c *Config) any { return &c.GPUMemoryUtilization }},
		{name: "kv_cache_dtype", category: kv, usage: "vLLM's --kv-cache-dtype: auto (the model's type), fp8 (fp8_e4m3, fp8_e5m2: one byte an element, twice the blocks), bfloat16, float16",
			field: func(c *Config) any { return &c.KVCacheDtype }},
		{name: "block_size", aliases: []string{"block_size_in_tokens"}, category: kv, usage: "tokens per KV block",
			field: func(c *Config) any { return &c.BlockSize }},
		{name: "enable_prefix_caching", category: kv,
			usage:    "vLLM's automatic prefix caching: requests reuse the KV blocks of a prompt prefix already computed",
			negation: "turn prefix caching off, as vLLM's flag does: every prompt is computed whole",
			field:    func(c *Config) any { return &c.EnablePrefixCaching }},
		{name: "kv_cpu_blocks", category: kv, usage: "CPU KV tier capacity in blocks; 0 = off",
			field: func(c *Config) any { return &c.KVCPUBlocks }},
		{name: "kv_cpu_bandwidth", category: kv, usage: "CPU tier reload bandwidth, tokens/µs", defaultText: "100",
			field: func(c *Config) any { return &c.KVCPUBandwidth }},
		{name: "kv_cpu_base_latency_us", category: kv, usage: "CPU tier reload latency per block, µs",
			field: func(c *Config) any { return &c.KVCPUBaseLatencyUs }},
		{name: "kv_offload_threshold", category: kv, omitZero: true,
			usage:       "CPU tier: GPU KV utilisation in [0, 1] above which blocks are offloaded (BLIS uses 0.9)",
			defaultText: "0: after every step, as vLLM's offload connector",
			field:       func(c *Config) any { return &c.KVOffloadThreshold }},
	}
}

// batchingKeys are the keys of batching and scheduling.
func batchingKeys() []key {
	batch := flagspec.CatBatching
	return []key{
		{name: "max_num_seqs", aliases: []string{"max_num_running_reqs"}, category: batch, usage: "max requests in a batch",
			defaultText: fmt.Sprintf("vLLM's: %d on a GPU of %d GiB or more that is not an A100 (H100, H200), else %d; %d with BLIS's latency models",
				bigGPUSeqs, bigGPUMinGiB, baseSeqs, baseSeqs),
			field: func(c *Config) any { return &c.MaxNumSeqs }},
		{name: "max_num_batched_tokens", aliases: []string{"max_num_scheduled_tokens"}, category: batch, usage: "token budget of a step",
			defaultText: fmt.Sprintf("vLLM's: %d on a GPU of %d GiB or more that is not an A100, else %d (BLIS's models: %d); without chunked prefill, max-model-len",
				bigGPUBatchedTokens, bigGPUMinGiB, baseBatchedTokens, baseBatchedTokens),
			field: func(c *Config) any { return &c.MaxNumBatchedTokens }},
		{name: "max_model_len", category: batch, usage: "max prompt + output tokens; 0 = from the model config, capped at the KV capacity",
			field: func(c *Config) any { return &c.MaxModelLen }},
		{name: "long_prefill_token_threshold", category: batch, usage: "max prefill tokens per request per step; 0 = off",
			field: func(c *Config) any { return &c.LongPrefillTokenThreshold }},
		{name: "enable_chunked_prefill", category: batch,
			usage:    "vLLM's chunked prefill: a prompt may be split over steps to fit the token budget",
			negation: "turn chunked prefill off, as vLLM's flag does: a prompt is scheduled whole or waits (max-num-batched-tokens must reach max-model-len)",
			field:    func(c *Config) any { return &c.EnableChunkedPrefill }},
		{name: "async_scheduling", category: batch,
			usage:       "vLLM's asynchronous scheduling: a step's batch is formed while the step before runs (--async-scheduling=false turns it off)",
			defaultText: "on from vLLM " + AsyncSchedulingSince,
			field:       func(c *Config) any { return &c.AsyncScheduling }},
		{name: "enforce_eager", category: batch,
			usage: "vLLM's --enforce-eager: no CUDA graphs, every step launches its kernels one by one (physics model)",
			field: func(c *Config) any { return &c.EnforceEager }},
		{name: "max_cudagraph_capture_size", category: batch,
			usage:       "the largest step in tokens vLLM runs as a CUDA graph; larger steps launch kernels one by one (physics model)",
			defaultText: fmt.Sprintf("min(2 × max-num-seqs, %d); %d decodes before vLLM %s", maxCaptureTokens, v0GraphBatch, V1Since),
			field:       func(c *Config) any { return &c.MaxCUDAGraphCaptureSize }},
		{name: "batching", category: batch, usage: "batch formation: vllm, vllm-v0, sarathi, orca, faster-transformer or lightllm",
			field: func(c *Config) any { return &c.Batching }},
		{name: "chunk_size", category: batch, usage: "sarathi: chunk budget in tokens per step",
			field: func(c *Config) any { return &c.ChunkSize }},
		{name: "scheduler", category: batch, usage: "wait-queue order: fcfs, priority-fcfs, sjf",
			field: func(c *Config) any { return &c.Scheduler }},
		{name: "preemption_policy", category: batch, usage: "victim: fcfs (tail of the batch) or priority",
			field: func(c *Config) any { return &c.PreemptionPolicy }},
		{name: "preempt_mode", category: batch, usage: "recompute (vLLM) or reset (BLIS)",
			field: func(c *Config) any { return &c.PreemptMode }},
		{name: "priority_policy", category: batch, usage: "slo-class, constant or slo-aging",
			field: func(c *Config) any { return &c.PriorityPolicy }},
		{name: "priority_age_weight", category: batch, usage: "slo-aging weight per second of age",
			field: func(c *Config) any { return &c.PriorityAgeWeight }},
		{name: "class_priorities", // YAML only: a map from SLO class to priority
			field: func(c *Config) any { return &c.ClassPriorities }},
	}
}

// clusterKeys are the keys of admission and routing around the instances.
func clusterKeys() []key {
	clu := flagspec.CatCluster
	return []key{
		{name: "admission_policy", category: clu, usage: "cluster admission: always-admit, token-bucket, reject-all, tier-shed (SLO tiers below tier-shed-min-priority refused while the busiest instance's queue + batch exceeds tier-shed-threshold) or gaie-legacy (llm-d's: sheddable tiers refused while the pool's saturation is at least 1)",
			choices: func() []string { return names(cluster.AdmissionPolicies()) },
			field:   func(c *Config) any { return &c.AdmissionPolicy }},
		{name: "token_bucket_capacity", category: clu, usage: "token-bucket admission: capacity in prompt tokens",
			field: func(c *Config) any { return &c.TokenBucketCapacity }},
		{name: "token_bucket_refill", category: clu, usage: "token-bucket admission: refill in prompt tokens per second",
			field: func(c *Config) any { return &c.TokenBucketRefill }},
		{name: "admission_latency", category: clu, usage: "delay from arrival to the admission decision, e.g. 200us",
			field: func(c *Config) any { return &c.AdmissionLatency }},
		{name: "routing_latency", category: clu, usage: "delay from the routing decision to the instance",
			field: func(c *Config) any { return &c.RoutingLatency }},
		{name: "routing_policy", category: clu, usage: "round-robin, random, least-loaded, least-outstanding, always-busiest or weighted",
			choices: func() []string { return names(cluster.RoutingPolicies()) },
			field:   func(c *Config) any { return &c.RoutingPolicy }},
		{name: "routing_scorers", category: clu, usage: "weighted routing: name:weight,... of prefix-affinity, precise-prefix-cache, queue-depth, kv-utilization, load-balance, no-hit-lru",
			field: func(c *Config) any { return &c.RoutingScorers }},
		{name: "snapshot_refresh_interval", category: clu, usage: "age after which routing re-reads queue depth, batch size and KV use (0 = live)",
			field: func(c *Config) any { return &c.SnapshotRefreshInterval }},
		{name: "cache_signal_delay", category: clu, usage: "refresh interval of the instances' prefix indexes seen by precise-prefix-cache (0 = live)",
			field: func(c *Config) any { return &c.CacheSignalDelay }},
	}
}

// pdKeys are the keys of prefill/decode disaggregation.
func pdKeys() []key {
	pd := flagspec.CatPD
	return []key{
		{name: "prefill_instances", category: pd, usage: "P/D: instances in the prefill pool (the first ones)",
			field: func(c *Config) any { return &c.PrefillInstances }},
		{name: "decode_instances", category: pd, usage: "P/D: instances in the decode pool",
			field: func(c *Config) any { return &c.DecodeInstances }},
		{name: "pd_decider", category: pd, usage: "P/D: which requests disaggregate: never, always or prefix-threshold",
			field: func(c *Config) any { return &c.PDDecider }},
		{name: "pd_prefix_threshold", category: pd, usage: "P/D prefix-threshold: disaggregate when uncached prompt tokens exceed this",
			field: func(c *Config) any { return &c.PDPrefixThreshold }},
		{name: "pd_transfer_bandwidth", category: pd, usage: "P/D: KV transfer bandwidth, GB/s",
			field: func(c *Config) any { return &c.PDTransferBandwidth }},
		{name: "pd_transfer_base_latency", category: pd, usage: "P/D: fixed latency of a KV transfer",
			field: func(c *Config) any { return &c.PDTransferBaseLatency }},
		{name: "pd_transfer_contention", category: pd, usage: "P/D: concurrent KV transfers share the bandwidth",
			field: func(c *Config) any { return &c.PDTransferContention }},
		{name: "encode_instances", category: pd, omitZero: true,
			usage: "encode pool: instances that encode a request's image, audio and video tokens (one pass each, timed as their prefill) before it is routed; 0 = none",
			field: func(c *Config) any { return &c.EncodeInstances }},
		{name: "encode_max_tokens", category: pd, omitZero: true,
			usage: "encode pool: the most media tokens one pass takes; a request with more is rejected at the encode stage (0 = no bound)",
			field: func(c *Config) any { return &c.EncodeMaxTokens }},
		{name: "encode_gpu", category: pd, omitZero: true, usage: "encode pool: the encoders' GPU (empty = --gpu)",
			field: func(c *Config) any { return &c.EncodeGPU }},
		{name: "encode_tensor_parallel", category: pd, omitZero: true, usage: "encode pool: the encoders' tensor-parallel degree (0 = --tensor-parallel)",
			field: func(c *Config) any { return &c.EncodeTP }},
	}
}

// gatewayKeys are the keys of the gateway in front of the routing: SLO
// tiers, tier-aware admission, tenant budgets and flow control. They are
// admission keys, of the cluster's category like admission_policy, and left
// out of trace headers at their defaults (deployments without a gateway
// read as they always did).
func gatewayKeys() []key {
	clu := flagspec.CatCluster
	return []key{
		{name: "tier_shed_threshold", category: clu, omitDefault: true,
			usage: "tier-shed admission: sheds while the busiest instance's queue depth + batch size exceeds this (0: whenever any instance has work)",
			field: func(c *Config) any { return &c.TierShedThreshold }},
		{name: "tier_shed_min_priority", category: clu, omitDefault: true,
			usage:       "tier-shed admission: the lowest SLO-tier priority admitted while shedding (llm-d's tiers: critical 4, standard 3, batch -1, sheddable -2, background -3; class_priorities overrides them)",
			defaultText: "3: critical and standard pass",
			field:       func(c *Config) any { return &c.TierShedMinPriority }},
		{name: "queue_depth_threshold", category: clu, omitDefault: true,
			usage:       "saturation (gaie-legacy, flow control): the queue depth at which an instance counts as full",
			defaultText: "5, llm-d's",
			field:       func(c *Config) any { return &c.QueueDepthThreshold }},
		{name: "kv_cache_util_threshold", category: clu, omitDefault: true,
			usage:       "saturation (gaie-legacy, flow control): the KV utilisation in (0, 1] at which an instance counts as full",
			defaultText: "0.8, llm-d's",
			field:       func(c *Config) any { return &c.KVCacheUtilThreshold }},
		{name: "tenant_budgets", category: clu, omitDefault: true,
			usage: "tenant:share,... of the cluster's concurrent slots (instances × max-num-seqs), shares in [0, 1]; a tenant's sheddable requests over its share are refused, others always pass",
			field: func(c *Config) any { return &c.TenantBudgets }},
		{name: "flow_control", category: clu, omitDefault: true,
			usage: "gateway queue in front of the routing (replaces the admission policy): per-priority bands of per-(tenant, priority) FIFO flows, dispatched while the pool is not saturated, on arrival and on a periodic tick",
			field: func(c *Config) any { return &c.FlowControl }},
		{name: "saturation_detector", category: clu, omitDefault: true,
			usage:   "flow control's gate: utilization (mean over instances of max(queue depth / queue-depth-threshold, KV use / kv-cache-util-threshold) < 1), concurrency (requests in flight < gateway-max-concurrency) or never",
			choices: cluster.Detectors,
			field:   func(c *Config) any { return &c.SaturationDetector }},
		{name: "gateway_max_concurrency", category: clu, omitDefault: true,
			usage: "flow control, concurrency detector: requests in flight on the instances at which the pool is saturated",
			field: func(c *Config) any { return &c.GatewayMaxConcurrency }},
		{name: "dispatch_order", category: clu, omitDefault: true,
			usage:   "flow control: fifo (the earliest arrival of any band), priority (the most urgent band first) or slo-deadline (bands by priority, then the earliest enqueue + TTFT target within a flow)",
			choices: cluster.DispatchOrders,
			field:   func(c *Config) any { return &c.DispatchOrder }},
		{name: "fairness_policy", category: clu, omitDefault: true,
			usage:   "flow control: which tenant's flow a band serves, global-strict (the earliest arrival) or round-robin (tenants in turn)",
			choices: cluster.FairnessPolicies,
			field:   func(c *Config) any { return &c.FairnessPolicy }},
		{name: "per_band_capacity", category: clu, omitDefault: true,
			usage: "flow control: requests a priority band may hold; a full band refuses (0 = unlimited)",
			field: func(c *Config) any { return &c.PerBandCapacity }},
		{name: "max_gateway_queue_depth", category: clu, omitDefault: true,
			usage: "flow control: requests the queue may hold over all bands; a full queue refuses (0 = unlimited)",
			field: func(c *Config) any { return &c.MaxGatewayQueueDepth }},
		{name: "queue_shedding", category: clu, omitDefault: true,
			usage: "flow control: a full queue sheds its newest entry of the least urgent sheddable band below the arrival's priority instead of refusing the arrival",
			field: func(c *Config) any { return &c.QueueShedding }},
		{name: "dispatch_tick_interval", category: clu, omitDefault: true,
			usage:       "flow control: the period of the dispatch tick, which runs only while requests wait",
			defaultText: "1ms, llm-d's",
			field:       func(c *Config) any { return &c.DispatchTickInterval }},
		{name: "gateway_ttl", category: clu, omitDefault: true,
			usage: "flow control: the longest a request may wait in the queue before it expires, checked at the dispatch ticks (0 = no limit)",
			field: func(c *Config) any { return &c.GatewayTTL }},
		{name: "in_flight_eviction", category: clu, omitDefault: true,
			usage: "flow control: while saturated and a non-sheddable request waits, stop the newest-dispatched request of the lowest sheddable tier on its instance (one per tick) and dispatch the waiting one",
			field: func(c *Config) any { return &c.InFlightEviction }},
		{name: "slo_targets", category: clu, omitDefault: true,
			usage: "flow control, slo-deadline order: class=TTFT target,... (e.g. critical=100ms,standard=500ms) for requests without their own slo_target_us",
			field: func(c *Config) any { return &c.SLOTargets }},
	}
}
