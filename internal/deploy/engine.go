package deploy

import (
	"strings"

	"servesim/internal/des/latency"
)

// The vLLM releases whose start-up defaults the simulator follows.
const (
	// V1Since is the first release whose default engine is V1: CUDA graphs
	// also for steps that prefill, and batch limits that depend on the GPU.
	V1Since = "0.8.0"
	// v0GraphBatch is the largest decode batch the V0 engine captured.
	v0GraphBatch = 256
)

// vLLM's API server batch limits: 8,192 tokens and 1,024 requests a step on
// a GPU of at least 70 GiB that is not an A100 (H100, H200, MI300X and
// their like), else 2,048 and 256 (its EngineArgs batch defaults).
const (
	bigGPUMinGiB                     = 70
	bigGPUBatchedTokens, bigGPUSeqs  = 8192, 1024
	baseBatchedTokens, baseSeqs      = 2048, 256
	maxCaptureTokens, captureSeqMult = latency.DefaultMaxCaptureTokens, 2
)

// resolveEngineDefaults fills what vLLM decides at start-up from its
// release and the GPU when the deployment does not say: the release (the
// latency model's), the batch limits, and which steps run as CUDA graphs.
// BLIS's latency models keep BLIS's own limits (256 requests, 2,048
// tokens), which its coefficients were trained with.
func (r *Resolved) resolveEngineDefaults(kind latency.Kind) error {
	if r.VLLMVersion == "" {
		r.VLLMVersion = DefaultVLLMVersion
		if kind != latency.KindPhysics {
			r.VLLMVersion = BLISVLLMVersion
		}
	}
	v, err := parseVersion(r.VLLMVersion)
	if err != nil {
		return invalid("deployment: %v", err)
	}
	v1, _ := parseVersion(V1Since)
	isV1 := v.atLeast(v1)
	seqs, tokens := baseSeqs, baseBatchedTokens
	if kind == latency.KindPhysics && isV1 && r.bigGPU() {
		seqs, tokens = bigGPUSeqs, bigGPUBatchedTokens
	}
	r.budgetGiven = r.MaxNumBatchedTokens > 0
	if r.MaxNumSeqs == 0 {
		r.MaxNumSeqs = seqs
	}
	if r.MaxNumBatchedTokens == 0 {
		r.MaxNumBatchedTokens = tokens
	}
	if r.PipelineParallel > r.MaxNumSeqs {
		return invalid("deployment: pipeline-parallel %d exceeds max-num-seqs %d (vLLM's default here; give --max-num-seqs)", r.PipelineParallel, r.MaxNumSeqs)
	}
	r.graphs = latency.CUDAGraphs{Eager: r.EnforceEager, MaxCaptureTokens: r.MaxCUDAGraphCaptureSize}
	switch {
	case !isV1:
		r.graphs.DecodeOnly = true
		if r.graphs.MaxCaptureTokens == 0 {
			r.graphs.MaxCaptureTokens = v0GraphBatch
		}
	case r.graphs.MaxCaptureTokens == 0:
		r.graphs.MaxCaptureTokens = min(captureSeqMult*r.MaxNumSeqs, maxCaptureTokens)
	}
	return nil
}

// bigGPU reports whether vLLM gives the deployment's GPU its larger batch
// defaults; an unknown GPU is taken as not.
func (r *Resolved) bigGPU() bool {
	g, err := latency.ResolveGPU(r.GPU, r.HardwareFile)
	if err != nil {
		return false
	}
	return g.MemoryGiB >= bigGPUMinGiB && !strings.Contains(strings.ToLower(g.Name), "a100")
}
