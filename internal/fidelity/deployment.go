package fidelity

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
)

// Assets locates the files a bench deployment needs beyond the embedded
// tables: a hardware JSON naming the GPUs (data/hardware.json) and a folder
// of HuggingFace config.json files, one subfolder per model (data/models).
// Paths are written into deployments as given, so make them relative to
// where the deployment will be used (the repository root for the committed
// YAML files).
type Assets struct {
	HardwareFile string
	ModelDir     string
}

// DefaultAssets are the committed data files, relative to the repository
// root.
func DefaultAssets() Assets {
	return Assets{HardwareFile: "internal/fidelity/data/hardware.json", ModelDir: "internal/fidelity/data/models"}
}

// modelAliases maps a served model (canonical lower-case name) to an
// embedded architecture that is the same network: the base and instruct
// releases of Llama 3.1 differ only in weights, and Qwen3-30B-A3B's 2507
// release only in max_position_embeddings.
func modelAliases() map[string]string {
	return map[string]string{
		"llama-3.1-8b":                "llama-3.1-8b-instruct",
		"qwen3-30b-a3b-instruct-2507": "qwen3-30b-a3b",
	}
}

// gpuNames maps CUDA device names to the hardware file's keys.
func gpuNames() map[string]string {
	return map[string]string{
		"nvidia geforce rtx 4090":                           "RTX4090",
		"nvidia rtx pro 6000 blackwell server edition":      "RTXPRO6000",
		"nvidia rtx pro 6000 blackwell workstation edition": "RTXPRO6000",
	}
}

// Deployment derives the simulator's deployment from a run's meta.json:
// model, GPU, tensor parallelism, batching limits (max_num_seqs,
// max_num_batched_tokens, long_prefill_token_threshold), KV block size and
// count, max_model_len and gpu_memory_utilization. Warnings say what had to
// be assumed.
//
// Data parallelism is one instance whose ranks step in lockstep
// (data_parallel; the physics model spreads tokens, KV and experts over the
// ranks and keeps each rank's whole dense model): with DP ranks, the
// batching limits and KV blocks are DP times one rank's, and one request's
// prefill chunk is capped at a rank's token budget
// (long_prefill_token_threshold).
func Deployment(r *Run, a Assets) (deploy.Config, []string, error) {
	m := &r.Meta
	var warns []string
	cfg := deploy.Default()
	model, err := resolveModel(m.Model, a)
	if err != nil {
		return cfg, nil, fmt.Errorf("fidelity: run %s: %w", r.Name, err)
	}
	cfg.Model = model
	gpu := r.Hardware
	if g, ok := gpuNames()[strings.ToLower(strings.TrimSpace(m.DeviceName))]; ok {
		gpu = g
	}
	if gpu == "" {
		return cfg, nil, fmt.Errorf("fidelity: run %s: the GPU is unknown (meta.json has no hardware.device_name and no LLMServingSim config.json names it)", r.Name)
	}
	cfg.GPU, cfg.HardwareFile = gpu, a.HardwareFile
	if _, err := latency.ResolveGPU(cfg.GPU, cfg.HardwareFile); err != nil {
		return cfg, nil, fmt.Errorf("fidelity: run %s: %w", r.Name, err)
	}
	dp := max(m.DataParallel, 1)
	cfg.TP, cfg.DataParallel = max(m.TensorParallel, 1), dp
	if dp > 1 {
		warns = append(warns, fmt.Sprintf("%s: data parallelism %d modelled as one lockstep instance with %d× the batching limits and KV blocks", r.Name, dp, dp))
	}
	if m.MaxNumSeqs > 0 {
		cfg.MaxNumSeqs = m.MaxNumSeqs * dp
	} else {
		warns = append(warns, fmt.Sprintf("%s: max_num_seqs not recorded; using %d", r.Name, cfg.MaxNumSeqs))
	}
	if m.MaxNumBatchedTokens > 0 {
		cfg.MaxNumBatchedTokens = m.MaxNumBatchedTokens * dp
	} else {
		warns = append(warns, fmt.Sprintf("%s: max_num_batched_tokens not recorded; using %d", r.Name, cfg.MaxNumBatchedTokens))
	}
	cfg.LongPrefillTokenThreshold = m.LongPrefillTokenThreshold
	if dp > 1 && m.MaxNumBatchedTokens > 0 && (cfg.LongPrefillTokenThreshold == 0 || cfg.LongPrefillTokenThreshold > m.MaxNumBatchedTokens) {
		// A request lives on one rank, whose budget bounds its chunk.
		cfg.LongPrefillTokenThreshold = m.MaxNumBatchedTokens
	}
	if m.BlockSize > 0 {
		cfg.BlockSize = m.BlockSize
	} else {
		warns = append(warns, fmt.Sprintf("%s: KV block size not recorded; using vLLM's default %d", r.Name, cfg.BlockSize))
	}
	if m.GPUMemoryUtilization > 0 {
		cfg.GPUMemoryUtilization = m.GPUMemoryUtilization
	}
	if m.NumGPUBlocks > 0 {
		cfg.TotalKVBlocks = m.NumGPUBlocks * dp
	} else {
		warns = append(warns, fmt.Sprintf("%s: KV block count not recorded; computed from GPU memory", r.Name))
	}
	cfg.MaxModelLen = m.MaxModelLen
	// The vLLM release and its scheduling: asynchronous from 0.14 unless
	// the run's scheduler_config says otherwise.
	cfg.VLLMVersion = m.VLLMVersion
	cfg.AsyncScheduling = m.AsyncScheduling
	if m.ChunkedPrefill != nil && !*m.ChunkedPrefill {
		warns = append(warns, fmt.Sprintf("%s: chunked prefill was off; the simulator always chunks", r.Name))
	}
	return cfg, warns, nil
}

// resolveModel finds the model: an embedded one, an alias of one, or a
// config.json under the asset folder (named by the canonical name).
func resolveModel(served string, a Assets) (string, error) {
	canon := latency.CanonicalModelName(served)
	if alias, ok := modelAliases()[canon]; ok {
		return alias, nil
	}
	if _, err := latency.LookupModel(served); err == nil {
		return canon, nil
	}
	if a.ModelDir != "" {
		p := filepath.Join(a.ModelDir, canon)
		if _, err := os.Stat(filepath.Join(p, "config.json")); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("model %q is neither embedded (%s) nor in %s", served, strings.Join(latency.KnownModels(), ", "), a.ModelDir)
}
