package fidelity

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
)

// deploymentYAML is the part of a deployment the bench runs set, in the
// order a reader wants it; keys are deploy.Config's.
type deploymentYAML struct {
	Model                string    `yaml:"model"`
	GPU                  string    `yaml:"gpu"`
	HardwareFile         string    `yaml:"hardware_file,omitempty"`
	TP                   int       `yaml:"tensor_parallel"`
	DP                   int       `yaml:"data_parallel,omitempty"`
	TotalKVBlocks        int       `yaml:"total_kv_blocks,omitempty"`
	GPUMemoryUtilization float64   `yaml:"gpu_memory_utilization"`
	BlockSize            int       `yaml:"block_size"`
	MaxModelLen          int       `yaml:"max_model_len,omitempty"`
	MaxNumSeqs           int       `yaml:"max_num_seqs"`
	MaxNumBatchedTokens  int       `yaml:"max_num_batched_tokens"`
	LongPrefill          int       `yaml:"long_prefill_token_threshold,omitempty"`
	LatencyModel         string    `yaml:"latency_model"`
	VLLMVersion          string    `yaml:"vllm_version,omitempty"`
	AsyncScheduling      *bool     `yaml:"async_scheduling,omitempty"`
	Alpha                []float64 `yaml:"alpha_coeffs,flow,omitempty"`
	Beta                 []float64 `yaml:"beta_coeffs,flow,omitempty"`
}

// WriteDeployment writes cfg as a deployment YAML that `run` and `replay`
// take with --deployment, with the comment lines first (each prefixed
// "# "). Only the keys a bench run sets are written; the others keep their
// defaults.
func WriteDeployment(w io.Writer, cfg deploy.Config, comment []string) error {
	var b strings.Builder
	for _, c := range comment {
		b.WriteString(strings.TrimRight("# "+c, " ") + "\n")
	}
	if cfg.LatencyModel == string(latency.KindPhysics) && len(cfg.BetaCoeffs) == latency.PhNumBetas {
		b.WriteString("# alpha_coeffs: Q, A_end, A_tok (µs); beta_coeffs, in order: " +
			strings.Join(latency.PhysicsBetaNames(), ", ") + "\n")
	}
	data, err := yaml.Marshal(deploymentYAML{
		Model: cfg.Model, GPU: cfg.GPU, HardwareFile: cfg.HardwareFile, TP: cfg.TP, TotalKVBlocks: cfg.TotalKVBlocks,
		DP:                   dataParallel(cfg.DataParallel),
		GPUMemoryUtilization: cfg.GPUMemoryUtilization, BlockSize: cfg.BlockSize, MaxModelLen: cfg.MaxModelLen,
		MaxNumSeqs: cfg.MaxNumSeqs, MaxNumBatchedTokens: cfg.MaxNumBatchedTokens, LongPrefill: cfg.LongPrefillTokenThreshold,
		LatencyModel: cfg.LatencyModel, VLLMVersion: cfg.VLLMVersion, AsyncScheduling: cfg.AsyncScheduling,
		Alpha: cfg.AlphaCoeffs, Beta: cfg.BetaCoeffs,
	})
	if err != nil {
		return fmt.Errorf("fidelity: deployment yaml: %w", err)
	}
	b.Write(data)
	_, err = io.WriteString(w, b.String())
	return err
}

// dataParallel writes DP only when it is more than one rank.
func dataParallel(dp int) int {
	if dp > 1 {
		return dp
	}
	return 0
}

// Relocate rewrites the asset paths of cfg from one Assets to another (for
// instance from the package directory, where tests run, to the repository
// root, where users run the commands).
func Relocate(cfg deploy.Config, from, to Assets) deploy.Config {
	if cfg.HardwareFile == from.HardwareFile {
		cfg.HardwareFile = to.HardwareFile
	}
	if rel, err := filepath.Rel(from.ModelDir, cfg.Model); err == nil && from.ModelDir != "" && !strings.HasPrefix(rel, "..") {
		cfg.Model = filepath.ToSlash(filepath.Join(to.ModelDir, rel))
	}
	return cfg
}

// FileName is the deployment file name of a run: its name with / as _.
func FileName(run string) string {
	return strings.ReplaceAll(run, "/", "_") + ".yaml"
}
