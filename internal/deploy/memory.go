package deploy

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"

	"servesim/internal/des/instance"
	"servesim/internal/des/kvcache"
)

// Bounds on the sizes a deployment gives, checked before anything is sized
// by them.
const (
	// maxBlockSize bounds block-size: vLLM's blocks hold 8 to 256 tokens.
	maxBlockSize = 1 << 16
	// maxInstances bounds num-instances (and the P/D pools) where the
	// machine's memory is not known.
	maxInstances = 1 << 20
	// perInstanceBytes is what an instance costs beside its KV cache: its
	// queues and latency model, the router's prefix index of it (weighted
	// routing) and the cluster's state per instance. Measured at 30–160 KB
	// (TestFootprintBound).
	perInstanceBytes = 256 << 10
	// memoryShare is the share of the machine's available memory the
	// simulator's fixed structures may take: the rest is for the requests
	// in flight, the outputs and the reading of the trace.
	memoryShare = 0.75
)

// Footprint is the memory, in bytes, that the simulator allocates for the
// deployment before its first request: every instance's KV cache and
// state.
func (r *Resolved) Footprint() float64 {
	if r.pools == nil || len(r.ClusterConfig.Instances) == 0 {
		return footprint(r.instanceCount(), r.Instance.KV.Blocks)
	}
	var sum float64
	for _, ic := range r.ClusterConfig.Instances { // each pool's own KV size
		sum += footprint(1, ic.KV.Blocks)
	}
	return sum
}

// checkPoolsMemory bounds the memory of a deployment whose pools have KV
// sizes of their own by what the machine can hold (each pool alone, and
// the base, were bounded as they were resolved).
func (r *Resolved) checkPoolsMemory(avail uint64, ok bool) error {
	if r.pools == nil || !ok {
		return nil
	}
	if need := r.Footprint(); need > memoryShare*float64(avail) {
		return invalid("deployment: the prefill and decode pools need about %s of memory to simulate, more than %.0f%% of the %s this machine has available; "+
			"lower their instances or KV blocks", bytesText(need), 100*memoryShare, bytesText(float64(avail)))
	}
	return nil
}

// footprint is Footprint for n instances of blocks KV blocks each, in
// float64 so that no count overflows it.
func footprint(instances, blocks int) float64 {
	return float64(instances) * float64(kvcache.Footprint(blocks)+perInstanceBytes)
}

// checkSizes bounds the counts that size memory — instances and KV blocks
// — by what the machine can hold (avail bytes; ok false = unknown, only the
// fixed bounds apply). blocks is the resolved GPU block count.
func (r *Resolved) checkSizes(blocks int, avail uint64, ok bool) error {
	if r.Batching == string(instance.BatchLightLLM) {
		// LightLLM manages KV per token: T·b blocks of one token.
		if blocks > kvcache.MaxBlocks/r.BlockSize {
			return invalid("deployment: batching lightllm holds KV per token, and total-kv-blocks %d × block-size %d exceeds %d, the most a KV cache can hold",
				blocks, r.BlockSize, kvcache.MaxBlocks)
		}
		blocks *= r.BlockSize
	} else if blocks > kvcache.MaxBlocks {
		return invalid("deployment: total-kv-blocks %d exceeds %d, the most a KV cache can hold", blocks, kvcache.MaxBlocks)
	}
	n := r.instanceCount()
	if n > maxInstances {
		return invalid("deployment: %d instances exceed %d, the most one simulation holds", n, maxInstances)
	}
	need := footprint(n, blocks)
	if !ok || need <= memoryShare*float64(avail) {
		return nil
	}
	return invalid("deployment: %d instances of %d KV blocks need about %s of memory to simulate, more than %.0f%% of the %s this machine has available; "+
		"lower num-instances or total-kv-blocks", n, blocks, bytesText(need), 100*memoryShare, bytesText(float64(avail)))
}

// instanceCount is the number of instances, P/D pools included; a sum
// too large for an int is clamped (it is refused anyway).
func (r *Resolved) instanceCount() int {
	if p, d := r.Cluster.PrefillInstances, r.Cluster.DecodeInstances; p > 0 {
		if d > int(^uint(0)>>1)-p {
			return int(^uint(0) >> 1)
		}
		return p + d
	}
	return r.Instances
}

func bytesText(b float64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.1f TiB", b/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", b/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", b/(1<<20))
}

// availableMemory is the memory this process can still take: the smaller
// of the machine's available memory (MemAvailable in /proc/meminfo) and
// what its cgroup's limit leaves (v2 memory.max − memory.current, or v1
// limit_in_bytes − usage_in_bytes). ok is false where none is known.
func availableMemory() (avail uint64, ok bool) {
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, found := bytes.CutPrefix(sc.Bytes(), []byte("MemAvailable:")); found {
				if f := bytes.Fields(rest); len(f) > 0 {
					if kb, err := strconv.ParseUint(string(f[0]), 10, 64); err == nil {
						avail, ok = kb<<10, true
					}
				}
			}
		}
	}
	for _, files := range [][2]string{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
	} {
		limit, lok := readUint(files[0])
		used, uok := readUint(files[1])
		if lok && uok {
			left := uint64(0)
			if limit > used {
				left = limit - used
			}
			if !ok || left < avail {
				avail, ok = left, true
			}
			break
		}
	}
	return avail, ok
}

// readUint reads a file holding one number ("max" and other text: false).
func readUint(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	return v, err == nil
}
