package deploy

import (
	"fmt"
	"strings"

	"servesim/internal/des/latency"
	"servesim/internal/flagspec"
)

// Pools are the P/D pools' own deployments: each field overrides the base
// deployment's for the instances of its pool, and a zero field keeps the
// base's (docs/simulator.md §12). The keys are the base's with the pool's
// name in front (prefill_gpu, decode_max_num_seqs, ...).
type Pools struct {
	PrefillGPU                 string `yaml:"prefill_gpu" json:",omitempty"`
	PrefillTP                  int    `yaml:"prefill_tensor_parallel" json:",omitempty"`
	PrefillMaxNumSeqs          int    `yaml:"prefill_max_num_seqs" json:",omitempty"`
	PrefillMaxNumBatchedTokens int    `yaml:"prefill_max_num_batched_tokens" json:",omitempty"`
	PrefillTotalKVBlocks       int    `yaml:"prefill_total_kv_blocks" json:",omitempty"`
	PrefillLatencyModel        string `yaml:"prefill_latency_model" json:",omitempty"`

	DecodeGPU                 string `yaml:"decode_gpu" json:",omitempty"`
	DecodeTP                  int    `yaml:"decode_tensor_parallel" json:",omitempty"`
	DecodeMaxNumSeqs          int    `yaml:"decode_max_num_seqs" json:",omitempty"`
	DecodeMaxNumBatchedTokens int    `yaml:"decode_max_num_batched_tokens" json:",omitempty"`
	DecodeTotalKVBlocks       int    `yaml:"decode_total_kv_blocks" json:",omitempty"`
	DecodeLatencyModel        string `yaml:"decode_latency_model" json:",omitempty"`
}

// PoolOverride is one pool's deployment over the base: a zero field keeps
// the base's value.
type PoolOverride struct {
	GPU                 string
	TP                  int
	MaxNumSeqs          int
	MaxNumBatchedTokens int
	TotalKVBlocks       int
	LatencyModel        string
}

// PoolNames are the pools that take overrides, in key order.
func PoolNames() []string { return []string{"prefill", "decode"} }

// poolFields points at one pool's override fields of c.
type poolFields struct {
	gpu, latency                                  *string
	tp, maxNumSeqs, maxBatchedTokens, totalBlocks *int
}

func (c *Config) poolFields(pool string) poolFields {
	p := &c.Pools
	if pool == "prefill" {
		return poolFields{&p.PrefillGPU, &p.PrefillLatencyModel, &p.PrefillTP, &p.PrefillMaxNumSeqs,
			&p.PrefillMaxNumBatchedTokens, &p.PrefillTotalKVBlocks}
	}
	return poolFields{&p.DecodeGPU, &p.DecodeLatencyModel, &p.DecodeTP, &p.DecodeMaxNumSeqs,
		&p.DecodeMaxNumBatchedTokens, &p.DecodeTotalKVBlocks}
}

// Pool is the override of the named pool ("prefill" or "decode").
func (c Config) Pool(pool string) PoolOverride {
	f := c.poolFields(pool)
	return PoolOverride{GPU: *f.gpu, TP: *f.tp, MaxNumSeqs: *f.maxNumSeqs, MaxNumBatchedTokens: *f.maxBatchedTokens,
		TotalKVBlocks: *f.totalBlocks, LatencyModel: *f.latency}
}

// IsZero reports whether o overrides nothing.
func (o PoolOverride) IsZero() bool { return o == PoolOverride{} }

// Over is base with o's non-zero fields in place of base's, the pool
// overrides cleared: the deployment of one instance of the pool. base is
// a value; the caller's copy is never changed.
func (o PoolOverride) Over(base Config) Config {
	out := base
	out.Pools = Pools{}
	if o.GPU != "" {
		out.GPU = o.GPU
	}
	if o.TP != 0 {
		out.TP = o.TP
	}
	if o.MaxNumSeqs != 0 {
		out.MaxNumSeqs = o.MaxNumSeqs
	}
	if o.MaxNumBatchedTokens != 0 {
		out.MaxNumBatchedTokens = o.MaxNumBatchedTokens
	}
	if o.TotalKVBlocks != 0 {
		out.TotalKVBlocks = o.TotalKVBlocks
	}
	if o.LatencyModel != "" {
		out.LatencyModel = o.LatencyModel
	}
	return out
}

// poolKeys are the keys of the pools' overrides: for each pool, the base
// key's name after the pool's.
func poolKeys() []key {
	var out []key
	for _, pool := range PoolNames() {
		out = append(out,
			key{name: pool + "_gpu", category: flagspec.CatPD, omitZero: true,
				usage: "P/D: the " + pool + " pool's GPU (empty = --gpu)",
				field: func(c *Config) any { return c.poolFields(pool).gpu }},
			key{name: pool + "_tensor_parallel", category: flagspec.CatPD, omitZero: true,
				usage: "P/D: the " + pool + " pool's tensor-parallel degree (0 = --tensor-parallel)",
				field: func(c *Config) any { return c.poolFields(pool).tp }},
			key{name: pool + "_max_num_seqs", category: flagspec.CatPD, omitZero: true,
				usage: "P/D: the " + pool + " pool's max requests in a batch (0 = --max-num-seqs)",
				field: func(c *Config) any { return c.poolFields(pool).maxNumSeqs }},
			key{name: pool + "_max_num_batched_tokens", category: flagspec.CatPD, omitZero: true,
				usage: "P/D: the " + pool + " pool's token budget of a step (0 = --max-num-batched-tokens)",
				field: func(c *Config) any { return c.poolFields(pool).maxBatchedTokens }},
			key{name: pool + "_total_kv_blocks", category: flagspec.CatPD, omitZero: true,
				usage: "P/D: the " + pool + " pool's KV blocks per instance (0 = --total-kv-blocks, else from its GPU's memory)",
				field: func(c *Config) any { return c.poolFields(pool).totalBlocks }},
			key{name: pool + "_latency_model", category: flagspec.CatPD, omitZero: true,
				usage:   "P/D: the " + pool + " pool's latency model (empty = --latency-model)",
				choices: func() []string { return names(latency.Kinds()) },
				field:   func(c *Config) any { return c.poolFields(pool).latency }},
		)
	}
	return out
}

// poolProblems checks the override fields alone: numbers not negative, a
// latency model known, and no override without the P/D split it is for.
func (c Config) poolProblems() []problem {
	var ps []problem
	for _, pool := range PoolNames() {
		o := c.Pool(pool)
		for _, f := range []struct {
			name string
			v    int
		}{{"tensor_parallel", o.TP}, {"max_num_seqs", o.MaxNumSeqs},
			{"max_num_batched_tokens", o.MaxNumBatchedTokens}, {"total_kv_blocks", o.TotalKVBlocks}} {
			if f.v < 0 {
				ps = append(ps, problem{key: pool + "_" + f.name, msg: fmt.Sprintf("%d must not be negative (0 = the base deployment's)", f.v)})
			}
		}
		if o.LatencyModel != "" {
			if _, err := latency.ParseKind(o.LatencyModel); err != nil {
				ps = append(ps, problem{key: pool + "_latency_model", msg: fmt.Sprintf("%q: %v", o.LatencyModel, err)})
			}
		}
	}
	return ps
}

// poolCombinations: an override needs the pool it is for.
func (c Config) poolCombinations() []problem {
	var ps []problem
	if c.EncodeInstances == 0 && (c.EncodeGPU != "" || c.EncodeTP != 0) {
		ps = append(ps, problem{keys: []string{"encode_instances", "encode_gpu", "encode_tensor_parallel"},
			msg: "encode-gpu and encode-tensor-parallel need encode-instances"})
	}
	if c.PrefillInstances > 0 {
		return ps
	}
	for _, pool := range PoolNames() {
		if !c.Pool(pool).IsZero() {
			ps = append(ps, problem{keys: []string{"prefill_instances", pool + "_gpu"},
				msg: fmt.Sprintf("%s pool overrides (%s) need prefill-instances and decode-instances", pool, c.Pool(pool).describe())})
		}
	}
	return ps
}

// describe lists the fields o sets, as flags would say them.
func (o PoolOverride) describe() string {
	var parts []string
	add := func(name string, v any, set bool) {
		if set {
			parts = append(parts, fmt.Sprintf("%s %v", name, v))
		}
	}
	add("gpu", o.GPU, o.GPU != "")
	add("tensor-parallel", o.TP, o.TP != 0)
	add("max-num-seqs", o.MaxNumSeqs, o.MaxNumSeqs != 0)
	add("max-num-batched-tokens", o.MaxNumBatchedTokens, o.MaxNumBatchedTokens != 0)
	add("total-kv-blocks", o.TotalKVBlocks, o.TotalKVBlocks != 0)
	add("latency-model", o.LatencyModel, o.LatencyModel != "")
	return strings.Join(parts, ", ")
}

// resolvePools resolves the deployment of each pool that has overrides, on
// the deployment as given (before Resolve derived anything from the base's
// GPU): nil for a pool without overrides.
func resolvePools(given Config) (map[string]*Resolved, error) {
	out := map[string]*Resolved{}
	for _, pool := range append(PoolNames(), "encode") {
		o, n := given.Pool(pool), given.DecodeInstances
		switch pool {
		case "prefill":
			n = given.PrefillInstances
		case "encode":
			// Encoders hold no KV cache: one stands for the pool's latency.
			o, n = PoolOverride{GPU: given.EncodeGPU, TP: given.EncodeTP}, min(given.EncodeInstances, 1)
		}
		if o.IsZero() || n <= 0 || (pool != "encode" && given.PrefillInstances <= 0) {
			continue
		}
		res, err := o.resolve(given, n)
		if err != nil {
			return nil, fmt.Errorf("%s pool (%s): %w", pool, o.describe(), err)
		}
		out[pool] = res
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// resolve resolves the deployment of n instances of o's pool alone: o over
// given (the deployment as given, before Resolve derived anything from
// the base's GPU), without the base's cluster. n bounds the pool's memory
// footprint (checkSizes).
func (o PoolOverride) resolve(given Config, n int) (*Resolved, error) {
	one := o.Over(given)
	one.Cluster = defaultCluster()
	one.Instances = n
	return Resolve(one)
}
