package deploy

// GPUsPerInstance is the GPUs one instance runs on: tensor parallel ×
// pipeline stages × data-parallel ranks (each rank holds a whole copy of
// the model's TP × PP shards).
func (c Config) GPUsPerInstance() int {
	return max(c.TP, 1) * max(c.PipelineParallel, 1) * max(c.DataParallel, 1)
}

// GPUs is the GPUs of the whole deployment: GPUsPerInstance times the
// instances (the prefill and decode pools when disaggregated, each at its
// own tensor parallelism), and the encoders' (tensor parallel each). It
// needs no Resolve, so a deployment that cannot be built is counted too.
func (c Config) GPUs() int {
	n := 0
	for _, g := range c.gpuCounts() {
		n += g.count
	}
	return n
}

type gpuCount struct {
	gpu   string
	count int
}

// gpuCounts is the GPU type and count of each part of the deployment: the
// instances (or the prefill and decode pools), then the encoders.
func (c Config) gpuCounts() []gpuCount {
	var out []gpuCount
	if c.PrefillInstances > 0 {
		for _, pool := range PoolNames() {
			n := c.DecodeInstances
			if pool == "prefill" {
				n = c.PrefillInstances
			}
			one := c.Pool(pool).Over(c)
			out = append(out, gpuCount{one.GPU, max(n, 0) * one.GPUsPerInstance()})
		}
	} else {
		out = append(out, gpuCount{c.GPU, max(c.Instances, 1) * c.GPUsPerInstance()})
	}
	if c.EncodeInstances > 0 {
		enc := PoolOverride{GPU: c.EncodeGPU, TP: c.EncodeTP}.Over(c)
		out = append(out, gpuCount{enc.GPU, c.EncodeInstances * max(enc.TP, 1)})
	}
	return out
}

// GPUMix is the GPUs of a deployment whose parts run on different GPU
// types: the count of each type, in order of appearance (prefill, decode,
// encode). It is nil when every GPU is of one type.
func (c Config) GPUMix() (gpus []string, counts []int) {
	at := map[string]int{}
	for _, g := range c.gpuCounts() {
		i, ok := at[g.gpu]
		if !ok {
			i = len(gpus)
			at[g.gpu] = i
			gpus, counts = append(gpus, g.gpu), append(counts, 0)
		}
		counts[i] += g.count
	}
	if len(gpus) < 2 {
		return nil, nil
	}
	return gpus, counts
}
