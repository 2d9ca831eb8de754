package deploy

import (
	"servesim/internal/des/cluster"
	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
	"servesim/internal/des/latency"
	"servesim/internal/exitcode"
)

// Config is a deployment as a user describes it. YAML keys are the flag names
// with underscores; zero values mean "the default" (see Default).
type Config struct {
	Model        string `yaml:"model"`         // embedded model name, HF id, or path to config.json
	GPU          string `yaml:"gpu"`           // H100, A100-SXM (A100-80), L40S, or a name in HardwareFile
	HardwareFile string `yaml:"hardware_file"` // optional GPU specs JSON
	TP           int    `yaml:"tensor_parallel"`
	// DataParallel is the number of data-parallel ranks that step in
	// lockstep as one instance (vLLM --data-parallel-size; with a mixture
	// of experts, expert parallelism over all GPUs). Batching limits and
	// KV blocks are the instance's (all ranks'); physics model only.
	DataParallel int `yaml:"data_parallel"`
	Instances    int `yaml:"num_instances"`

	TotalKVBlocks        int     `yaml:"total_kv_blocks"` // 0 = from GPU memory (docs/simulator.md §8.5)
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization"`
	BlockSize            int     `yaml:"block_size"`
	MaxModelLen          int     `yaml:"max_model_len"` // 0 = from the model config, capped at T·b

	// MaxNumSeqs and MaxNumBatchedTokens are vLLM's batch limits; 0 =
	// vLLM's default for the GPU and release (see engineDefaults). Without
	// chunked prefill, the default budget rises to max_model_len.
	MaxNumSeqs                int `yaml:"max_num_seqs"`
	MaxNumBatchedTokens       int `yaml:"max_num_batched_tokens"`
	LongPrefillTokenThreshold int `yaml:"long_prefill_token_threshold"`

	// vLLM's --enable-prefix-caching and --enable-chunked-prefill, both on
	// by default as in vLLM (batching vllm).
	EnablePrefixCaching  bool `yaml:"enable_prefix_caching"`
	EnableChunkedPrefill bool `yaml:"enable_chunked_prefill"`

	LatencyModel string    `yaml:"latency_model"` // physics, trained-physics, roofline, blackbox
	AlphaCoeffs  []float64 `yaml:"alpha_coeffs"`
	BetaCoeffs   []float64 `yaml:"beta_coeffs"`
	// StepTimeSigma is the relative uncertainty σ of the latency model's
	// step times (a fit's residual spread); 0 = the documented default of
	// the model kind (latency.DefaultSigmaOf). Sweeps and replays with
	// --interval run at step-time scales 1 ± 1.645σ. Left out of JSON and
	// of the recorded keys when 0, so that deployments without it read as
	// they always did.
	StepTimeSigma float64 `yaml:"step_time_sigma" json:",omitempty"`

	Scheduler         string         `yaml:"scheduler"`         // fcfs, priority-fcfs, sjf
	PreemptionPolicy  string         `yaml:"preemption_policy"` // fcfs, priority
	PreemptMode       string         `yaml:"preempt_mode"`      // recompute, reset
	PriorityPolicy    string         `yaml:"priority_policy"`   // slo-class, constant, slo-aging
	PriorityAgeWeight float64        `yaml:"priority_age_weight"`
	ClassPriorities   map[string]int `yaml:"class_priorities"`

	KVCPUBlocks        int     `yaml:"kv_cpu_blocks"`
	KVCPUBandwidth     float64 `yaml:"kv_cpu_bandwidth"` // tokens/µs
	KVCPUBaseLatencyUs int64   `yaml:"kv_cpu_base_latency_us"`
	// KVOffloadThreshold is the GPU KV utilisation above which blocks are
	// copied to the CPU tier (BLIS's --kv-offload-threshold); 0 = after
	// every step.
	KVOffloadThreshold float64 `yaml:"kv_offload_threshold" json:",omitempty"`

	Batching  string `yaml:"batching"`   // vllm, vllm-v0, sarathi, orca, faster-transformer, lightllm
	ChunkSize int    `yaml:"chunk_size"` // sarathi chunk budget

	// VLLMVersion is the vLLM release the deployment models ("" = the
	// latency model's: BLISVLLMVersion for BLIS's models, else
	// DefaultVLLMVersion); it decides AsyncScheduling unless that is set.
	VLLMVersion     string `yaml:"vllm_version"`
	AsyncScheduling *bool  `yaml:"async_scheduling"` // nil = on from vLLM 0.14 (AsyncSchedulingSince)
	// EnforceEager is vLLM's --enforce-eager: no CUDA graphs, every step
	// launches its kernels one by one.
	EnforceEager bool `yaml:"enforce_eager"`
	// MaxCUDAGraphCaptureSize is the largest step, in tokens, vLLM
	// captures as a CUDA graph; 0 = vLLM's default (min(2·max_num_seqs, 512)).
	MaxCUDAGraphCaptureSize int `yaml:"max_cudagraph_capture_size"`
	// KVCacheDtype and Quantization are vLLM's --kv-cache-dtype ("auto" =
	// the model's type) and --quantization ("" = as the model config says).
	KVCacheDtype string `yaml:"kv_cache_dtype"`
	Quantization string `yaml:"quantization"`

	PipelineParallel        int     `yaml:"pipeline_parallel"`         // pipeline stages per instance
	PPInterconnectBandwidth float64 `yaml:"pp_interconnect_bandwidth"` // GB/s between stages

	Cluster `yaml:",inline"`
	Pools   `yaml:",inline"`
}

// MaxDataParallel bounds data_parallel (ranks of one lockstep instance).
const MaxDataParallel = 1024

// Default is the deployment used when nothing is said: Qwen3-14B on one H100
// with vLLM's default batching limits (docs/simulator.md §16).
func Default() Config {
	return Config{
		Model:                   "qwen3-14b",
		GPU:                     "H100",
		TP:                      1,
		DataParallel:            1,
		Instances:               1,
		GPUMemoryUtilization:    0.9,
		KVCacheDtype:            "auto",
		BlockSize:               16,
		EnablePrefixCaching:     true,
		EnableChunkedPrefill:    true,
		LatencyModel:            string(latency.KindPhysics),
		Scheduler:               string(instance.SchedFCFS),
		PreemptionPolicy:        string(instance.PreemptFCFS),
		PreemptMode:             string(instance.ModeRecompute),
		PriorityPolicy:          string(instance.PrioritySLOClass),
		PriorityAgeWeight:       1,
		Batching:                string(instance.BatchVLLM),
		ChunkSize:               instance.DefaultChunkSize,
		PipelineParallel:        1,
		PPInterconnectBandwidth: 25,
		Cluster:                 defaultCluster(),
	}
}

// invalid is an invalid deployment description (exit code 2).
func invalid(format string, args ...any) error {
	return exitcode.Usagef(format, args...)
}

// Resolved is a deployment with every derived number filled in.
type Resolved struct {
	Config
	ModelConfig *latency.ModelConfig // nil when the latency model needs none and none was found
	Instance    instance.Config      // per-instance simulator configuration (ID 0; OnDone unset)
	// Cluster is the cluster configuration (every instance, policies, P/D);
	// the caller sets Seed, HorizonUs, OnDone and Decisions.
	ClusterConfig cluster.Config
	graphs        latency.CUDAGraphs
	pools         map[string]*Resolved // the pools with overrides (resolvePools)
	given         Config               // the deployment as given, before anything was derived
	budgetGiven   bool                 // max_num_batched_tokens was given, not vLLM's default
}

// Resolve validates cfg and derives KV capacity, max_model_len and the
// latency model.
func Resolve(cfg Config) (*Resolved, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	kind, err := latency.ParseKind(cfg.LatencyModel)
	if err != nil {
		return nil, invalid("latency model: %v", err)
	}
	res := &Resolved{Config: cfg, given: cfg}
	if err := res.resolveEngineDefaults(kind); err != nil {
		return nil, err
	}
	lat, err := latency.New(latency.Config{
		Kind: kind, Model: cfg.Model, GPU: cfg.GPU, HardwareFile: cfg.HardwareFile,
		TP: cfg.TP, DP: cfg.DataParallel, Graphs: res.graphs, Alpha: cfg.AlphaCoeffs, Beta: cfg.BetaCoeffs,
		KVCacheDtype: cfg.KVCacheDtype, Quantization: cfg.Quantization,
	})
	if err != nil {
		return nil, invalid("%v", err)
	}
	if cfg.Model != "" {
		if mc, err := latency.ResolveModel(cfg.Model); err == nil {
			if res.ModelConfig, err = mc.Serving(cfg.KVCacheDtype, cfg.Quantization); err != nil {
				return nil, invalid("%v", err)
			}
		} else if cfg.TotalKVBlocks == 0 {
			return nil, invalid("%v", err)
		}
	}
	if res.TotalKVBlocks == 0 {
		if res.ModelConfig == nil {
			return nil, invalid("total-kv-blocks is required when no model config is available")
		}
		gpu, err := latency.ResolveGPU(cfg.GPU, cfg.HardwareFile)
		if err != nil {
			return nil, invalid("%v", err)
		}
		blocks, err := latency.KVBlocks(res.ModelConfig, gpu, cfg.TP, cfg.GPUMemoryUtilization, cfg.BlockSize)
		if err != nil {
			return nil, invalid("%v", err)
		}
		res.TotalKVBlocks = int(blocks) * cfg.DataParallel // every rank holds its own cache
	}
	avail, known := availableMemory()
	if err := res.checkSizes(res.TotalKVBlocks, avail, known); err != nil {
		return nil, err
	}
	capacity := res.TotalKVBlocks * cfg.BlockSize
	switch {
	case cfg.MaxModelLen > 0:
		need := cfg.MaxModelLen / cfg.BlockSize
		if cfg.MaxModelLen%cfg.BlockSize != 0 {
			need++
		}
		if need > res.TotalKVBlocks {
			return nil, invalid("max-model-len %d needs %d KV blocks of %d tokens; the deployment has %d",
				cfg.MaxModelLen, need, cfg.BlockSize, res.TotalKVBlocks)
		}
	case res.ModelConfig != nil:
		res.MaxModelLen = int(latency.MaxModelLen(res.ModelConfig, int64(res.TotalKVBlocks), cfg.BlockSize))
	default:
		res.MaxModelLen = capacity
	}
	if err := res.resolveChunking(); err != nil {
		return nil, err
	}
	blocks, blockSize := res.TotalKVBlocks, cfg.BlockSize
	if cfg.Batching == string(instance.BatchLightLLM) {
		// LightLLM manages KV per token: the same memory as T·b blocks of 1.
		blocks, blockSize = blocks*blockSize, 1
	}
	res.Instance = instance.Config{
		KV: kvcache.Config{
			Blocks: blocks, BlockSize: blockSize,
			CPUBlocks: cfg.KVCPUBlocks, CPUBandwidthTokensUs: cfg.KVCPUBandwidth, CPUBaseLatencyUs: cfg.KVCPUBaseLatencyUs,
			CPUOffloadThreshold: cfg.KVOffloadThreshold,
			NoPrefixCaching:     !cfg.EnablePrefixCaching,
		},
		MaxNumSeqs:           res.MaxNumSeqs,
		MaxNumBatchedTokens:  res.MaxNumBatchedTokens,
		NoChunkedPrefill:     !cfg.EnableChunkedPrefill && cfg.Batching == string(instance.BatchVLLM),
		LongPrefillThreshold: cfg.LongPrefillTokenThreshold,
		MaxModelLen:          res.MaxModelLen,
		Scheduler:            instance.Scheduler(cfg.Scheduler),
		Preemption:           instance.PreemptionPolicy(cfg.PreemptionPolicy),
		PreemptMode:          instance.PreemptMode(cfg.PreemptMode),
		Priority:             instance.PriorityPolicy(cfg.PriorityPolicy),
		AgeWeight:            cfg.PriorityAgeWeight,
		ClassPriorities:      cfg.ClassPriorities,
		Latency:              lat,
		FastForward:          true,
		Batching:             instance.Batching(cfg.Batching),
		ChunkSize:            cfg.ChunkSize,
	}
	if err := res.resolvePipeline(kind); err != nil {
		return nil, err
	}
	if err := res.resolveCluster(); err != nil {
		return nil, err
	}
	if err := res.resolveScheduling(kind); err != nil {
		return nil, err
	}
	return res, nil
}
