package deploy

import (
	"servesim/internal/des/instance"
)

// resolveChunking applies vLLM's start-up rules for chunked prefill (its
// SchedulerConfig): without it a prompt of max_model_len must fit in one
// step, so the default token budget rises to max_model_len, and a budget
// the user gave that is smaller is refused. Chunked prefill is vLLM V1's
// own batching; sarathi always chunks and cannot run without it. Needs
// res.MaxModelLen.
func (res *Resolved) resolveChunking() error {
	if res.EnableChunkedPrefill {
		return nil
	}
	switch instance.Batching(res.Batching) {
	case instance.BatchVLLM:
	case instance.BatchSarathi:
		return invalid("deployment: batching sarathi always chunks prefills: it cannot run with enable-chunked-prefill off")
	default:
		return nil // the other variants never chunk
	}
	if !res.budgetGiven {
		res.MaxNumBatchedTokens = max(res.MaxNumBatchedTokens, res.MaxModelLen)
		return nil
	}
	if res.MaxNumBatchedTokens < res.MaxModelLen {
		return invalid("deployment: max-num-batched-tokens %d is smaller than max-model-len %d: without chunked prefill a prompt must fit in one step, and vLLM refuses to start; raise --max-num-batched-tokens or lower --max-model-len",
			res.MaxNumBatchedTokens, res.MaxModelLen)
	}
	return nil
}
