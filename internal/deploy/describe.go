package deploy

import (
	"fmt"
	"strings"

	"servesim/internal/des/instance"
)

// Describe names the simulated deployment in one line, for the text
// summary: model, GPUs, parallelism, instances, KV capacity, latency model,
// and the vLLM settings that differ from vLLM's defaults.
func (r *Resolved) Describe() string {
	model := r.Model
	if r.ModelConfig != nil && r.ModelConfig.Name != "" {
		model = r.ModelConfig.Name
	}
	par := fmt.Sprintf("TP %d", r.TP)
	if r.PipelineParallel > 1 {
		par += fmt.Sprintf(" × PP %d", r.PipelineParallel)
	}
	if r.DataParallel > 1 {
		par += fmt.Sprintf(" × DP %d", r.DataParallel)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %d × %s (%s)", model, r.GPUsPerInstance(), r.GPU, par)
	switch {
	case r.PrefillInstances > 0:
		fmt.Fprintf(&b, " per instance, %d prefill + %d decode instances", r.PrefillInstances, r.DecodeInstances)
	case r.Instances > 1:
		fmt.Fprintf(&b, " per instance, %d instances", r.Instances)
	}
	fmt.Fprintf(&b, ", %d KV blocks of %d tokens, %s latency model", r.TotalKVBlocks, r.BlockSize, r.LatencyModel)
	if r.Batching != string(instance.BatchVLLM) {
		fmt.Fprintf(&b, ", batching %s", r.Batching)
	}
	if !r.EnablePrefixCaching {
		b.WriteString(", no prefix caching")
	}
	if !r.EnableChunkedPrefill {
		b.WriteString(", no chunked prefill")
	}
	if r.EncodeInstances > 0 {
		fmt.Fprintf(&b, ", %d encode instances", r.EncodeInstances)
		if p := r.pools["encode"]; p != nil {
			fmt.Fprintf(&b, " on %d × %s", p.TP, p.GPU)
		}
	}
	for _, pool := range PoolNames() {
		if p := r.pools[pool]; p != nil {
			fmt.Fprintf(&b, "; %s pool: %d × %s (TP %d), %d KV blocks, max %d seqs, %d tokens a step, %s latency model",
				pool, p.GPUsPerInstance(), p.GPU, p.TP, p.TotalKVBlocks, p.MaxNumSeqs, p.MaxNumBatchedTokens, p.LatencyModel)
		}
	}
	return b.String()
}
