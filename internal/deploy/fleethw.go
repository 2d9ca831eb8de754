package deploy

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/des/cluster"
	"servesim/internal/strictyaml"
)

// hardware gives each pool of f its replicas' configuration: the pool's
// GPU type, tensor parallelism and hw_config_by_gpu limits resolved as a
// deployment override of r's (the P/D pools' resolution, each pool alone;
// r is not changed). A pool that overrides nothing runs r's instances
// (Instance nil).
func (doc *fleetDoc) hardware(file string, root *yaml.Node, r *Resolved, f *cluster.Fleet) error {
	gpus := map[string]bool{}
	for _, p := range doc.NodePools {
		gpus[p.GPUType] = true
	}
	if hw := child(root, "hw_config_by_gpu"); hw != nil {
		for i := 0; i+1 < len(hw.Content); i += 2 {
			k := hw.Content[i]
			if !gpus[k.Value] {
				return strictyaml.At(file, k, "hw_config_by_gpu", "%q is the gpu_type of no node pool", k.Value)
			}
			if c := doc.HWConfig[k.Value]; c.MaxNumSeqs < 0 || c.MaxNumBatchedTokens < 0 || c.TotalKVBlocks < 0 {
				return strictyaml.At(file, k, "hw_config_by_gpu."+k.Value, "max_num_seqs, max_num_batched_tokens and total_kv_blocks must not be negative (0 = the deployment's)")
			}
		}
	}
	pools := child(root, "node_pools")
	for i, p := range doc.NodePools {
		var at *yaml.Node
		if pools != nil && i < len(pools.Content) {
			at = pools.Content[i]
		}
		path := fmt.Sprintf("node_pools[%d]", i)
		if p.TP < 0 {
			return strictyaml.At(file, child(at, "tensor_parallel"), path+".tensor_parallel", "%d must not be negative (0 = the deployment's)", p.TP)
		}
		hw := doc.HWConfig[p.GPUType]
		o := PoolOverride{GPU: p.GPUType, TP: p.TP, MaxNumSeqs: hw.MaxNumSeqs, MaxNumBatchedTokens: hw.MaxNumBatchedTokens, TotalKVBlocks: hw.TotalKVBlocks}
		if o.GPU == r.given.GPU {
			o.GPU = ""
		}
		if o.TP == r.given.TP {
			o.TP = 0
		}
		pool := &f.Pools[i]
		pool.TP = max(r.TP, 1)
		if o.IsZero() {
			continue
		}
		res, err := o.resolve(r.given, poolSlots(p, max(p.TP, r.TP, 1)))
		if err != nil {
			return strictyaml.At(file, child(at, "gpu_type"), path, "replicas of %s: %s", o.describe(), strings.TrimPrefix(err.Error(), "deployment: "))
		}
		ic := res.Instance
		pool.TP, pool.Instance = max(res.TP, 1), &ic
	}
	return nil
}

// poolSlots is the replicas the initial nodes of p hold at tensor
// parallelism tp (at least 1, bounded): the pool's starting memory
// footprint, as checkSizes bounds it.
func poolSlots(p poolDoc, tp int) int {
	if p.GPUsPerNode < tp {
		return 1
	}
	return max(1, min(p.InitialNodes, 1<<16)*min(p.GPUsPerNode/tp, 1<<16))
}

// child is the value of key in mapping n (nil if n is not a mapping or
// has no such key).
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
