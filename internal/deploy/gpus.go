package deploy

// GPUsPerInstance is the GPUs one instance runs on: tensor parallel ×
// pipeline stages × data-parallel ranks (each rank holds a whole copy of
// the model's TP × PP shards).
func (c Config) GPUsPerInstance() int {
	return max(c.TP, 1) * max(c.PipelineParallel, 1) * max(c.DataParallel, 1)
}

// GPUs is the GPUs of the whole deployment: GPUsPerInstance times the
// instances (the prefill and decode pools when disaggregated). It needs
// no Resolve, so a deployment that cannot be built is counted too.
func (c Config) GPUs() int {
	n := c.Instances
	if c.PrefillInstances > 0 {
		n = c.PrefillInstances + c.DecodeInstances
	}
	return max(n, 1) * c.GPUsPerInstance()
}
