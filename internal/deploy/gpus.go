package deploy

// GPUsPerInstance is the GPUs one instance runs on: tensor parallel ×
// pipeline stages × data-parallel ranks (each rank holds a whole copy of
// the model's TP × PP shards).
func (c Config) GPUsPerInstance() int {
	return max(c.TP, 1) * max(c.PipelineParallel, 1) * max(c.DataParallel, 1)
}

// GPUs is the GPUs of the whole deployment: GPUsPerInstance times the
// instances (the prefill and decode pools when disaggregated, each at its
// own tensor parallelism). It needs no Resolve, so a deployment that
// cannot be built is counted too.
func (c Config) GPUs() int {
	if c.PrefillInstances > 0 {
		n := 0
		for _, g := range c.poolGPUs() {
			n += g.count
		}
		return n
	}
	return max(c.Instances, 1) * c.GPUsPerInstance()
}

type gpuCount struct {
	gpu   string
	count int
}

// poolGPUs is the GPU type and count of the prefill and decode pools.
func (c Config) poolGPUs() []gpuCount {
	var out []gpuCount
	for _, pool := range PoolNames() {
		n := c.DecodeInstances
		if pool == "prefill" {
			n = c.PrefillInstances
		}
		one := c.Pool(pool).Over(c)
		out = append(out, gpuCount{one.GPU, max(n, 0) * one.GPUsPerInstance()})
	}
	return out
}

// GPUMix is the GPUs of a deployment whose P/D pools run on different GPU
// types: the count of each type, in pool order (prefill, decode). It is
// nil when every instance runs on the base GPU.
func (c Config) GPUMix() (gpus []string, counts []int) {
	if c.PrefillInstances <= 0 || (c.PrefillGPU == "" || c.PrefillGPU == c.GPU) && (c.DecodeGPU == "" || c.DecodeGPU == c.GPU) {
		return nil, nil
	}
	for _, g := range c.poolGPUs() {
		gpus, counts = append(gpus, g.gpu), append(counts, g.count)
	}
	return gpus, counts
}
