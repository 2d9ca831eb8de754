package blistest

import (
	"bytes"
	"errors"

	"gopkg.in/yaml.v3"
)

// StrictHeader loads a header YAML the way BLIS's strict loader does
// (docs/simulator.md §2, §3): every key must be one BLIS knows (decoding with
// KnownFields), values of its types, trace_version present. The mirror of
// BLIS's header below is written from the spec's key table
// (docs/tracev2.md §3), not from tracev2.Header, so that a key of ours that
// leaks into a BLIS-compatible header is caught.
func StrictHeader(data []byte) error {
	type slo struct {
		TTFTMs float64 `yaml:"ttft_ms"`
		ITLMs  float64 `yaml:"itl_ms"`
		E2EMs  float64 `yaml:"e2e_ms"`
	}
	type tier struct {
		Type                   string  `yaml:"type"`
		RootDir                string  `yaml:"root_dir"`
		NReadThreads           int64   `yaml:"n_read_threads"`
		NWriteThreads          int64   `yaml:"n_write_threads"`
		Locality               string  `yaml:"locality"`
		EnableKVEvents         bool    `yaml:"enable_kv_events"`
		DirectIO               bool    `yaml:"direct_io"`
		DeviceClass            string  `yaml:"device_class"`
		ReadBandwidth          float64 `yaml:"read_bandwidth"`
		WriteBandwidth         float64 `yaml:"write_bandwidth"`
		BaseLatency            float64 `yaml:"base_latency"`
		SaturationQueueDepth   int64   `yaml:"saturation_queue_depth"`
		SingleTransferFraction float64 `yaml:"single_transfer_fraction"`
		LatencyJitterStddev    float64 `yaml:"latency_jitter_stddev"`
	}
	var h struct {
		TraceVersion         *int   `yaml:"trace_version"`
		TimeUnit             string `yaml:"time_unit"`
		CreatedAt            string `yaml:"created_at"`
		Mode                 string `yaml:"mode"`
		WarmUpRequests       int    `yaml:"warm_up_requests"`
		WorkloadSeed         int64  `yaml:"workload_seed"`
		WorkloadSpec         string `yaml:"workload_spec"`
		SessionContextGrowth string `yaml:"session_context_growth"`
		Server               struct {
			Type                 string  `yaml:"type"`
			Model                string  `yaml:"model"`
			TensorParallel       int     `yaml:"tensor_parallel"`
			MaxNumSeqs           int     `yaml:"max_num_seqs"`
			BlockSize            int     `yaml:"block_size"`
			GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization"`
			MaxModelLen          int64   `yaml:"max_model_len"`
		} `yaml:"server"`
		Network struct {
			MeasuredRTTMs float64 `yaml:"measured_rtt_ms"`
		} `yaml:"network"`
		GoodputSLOTargets map[string]slo `yaml:"goodput_slo_targets"`
		KVOffload         struct {
			CPUBytesToUse          int64  `yaml:"cpu_bytes_to_use"`
			PerBlockBytes          int64  `yaml:"per_block_bytes"`
			BlockSize              int64  `yaml:"block_size"`
			BlocksPerChunk         int64  `yaml:"blocks_per_chunk"`
			TokensPerHash          int64  `yaml:"tokens_per_hash"`
			EvictionPolicy         string `yaml:"eviction_policy"`
			OffloadPromptOnly      bool   `yaml:"offload_prompt_only"`
			SelfDescribingKVEvents bool   `yaml:"self_describing_kv_events"`
			SecondaryTiers         []tier `yaml:"secondary_tiers"`
		} `yaml:"kv_offload"`
		ObservedKVMetrics struct {
			Source         string  `yaml:"source"`
			HitRate        float64 `yaml:"hit_rate"`
			BlockHits      int64   `yaml:"block_hits"`
			BlockQueries   int64   `yaml:"block_queries"`
			ReadTimeTotal  float64 `yaml:"read_time_total"`
			WriteTimeTotal float64 `yaml:"write_time_total"`
			VLLMCommit     string  `yaml:"vllm_commit"`
		} `yaml:"observed_kv_metrics"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&h); err != nil {
		return err
	}
	if h.TraceVersion == nil {
		return errors.New("trace_version missing")
	}
	return nil
}
