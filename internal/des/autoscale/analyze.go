package autoscale

import (
	"cmp"
	"slices"
)

// Variant is a hardware configuration a replica runs on: its GPU type and
// tensor-parallel degree (GPUs per replica).
type Variant struct {
	GPU string
	TP  int
}

// Replica is one routable replica's signals at collection time.
type Replica struct {
	ID          int
	Variant     Variant
	CostPerHour float64 // of the GPUs the replica holds
	// KVCapacityTokens is the replica's KV cache in tokens (blocks × block
	// size); KVTokensInUse the tokens its used blocks hold.
	KVCapacityTokens, KVTokensInUse int64
	// ComputeCapacityTokens is the tokens the replica can hold at its
	// compute limit (0 = unknown: the memory bound is used alone).
	ComputeCapacityTokens int64
	QueueDepth, InFlight  int
}

// Signals is one model's replicas at a tick, with the replicas still
// loading (pending supply).
type Signals struct {
	Replicas                []Replica
	PendingReplicas         int
	PendingKVCapacityTokens int64
}

// Analyzer holds the V2 saturation analyzer's parameters.
type Analyzer struct {
	KVCacheThreshold  float64 // share of a replica's KV cache counted as usable (k1)
	ScaleUpThreshold  float64 // demand / supply above which capacity is required
	ScaleDownBoundary float64 // demand / supply below which capacity is spare
	AvgInputTokens    float64 // tokens a queued request will bring
}

// DefaultAnalyzer is the production parameter set (0.8, 0.8, 0.4, 512).
func DefaultAnalyzer() Analyzer {
	return Analyzer{KVCacheThreshold: 0.8, ScaleUpThreshold: 0.8, ScaleDownBoundary: 0.4, AvgInputTokens: 512}
}

// VariantCapacity is one variant's share of a model's supply and demand.
type VariantCapacity struct {
	Variant        Variant
	Supply, Demand float64
	Replicas       int
	CostPerReplica float64
}

// Result is a model's capacity assessment at one tick. Required and Spare
// are never both positive.
type Result struct {
	TotalSupply, TotalDemand float64
	Utilization              float64 // demand / supply; 0 without supply
	Required                 float64 // tokens of capacity to add (scale-up signal)
	Spare                    float64 // tokens of capacity that can go (scale-down signal)
	Variants                 []VariantCapacity
}

// Capacity is a replica's effective capacity in tokens: the smaller of its
// memory bound (KV tokens × threshold) and its compute bound, when known.
func (a Analyzer) Capacity(r Replica) float64 {
	k1 := float64(r.KVCapacityTokens) * a.KVCacheThreshold
	if r.ComputeCapacityTokens > 0 {
		return min(k1, float64(r.ComputeCapacityTokens))
	}
	return k1
}

// Demand is a replica's demand in tokens: the tokens it holds plus its
// queue at the average input length.
func (a Analyzer) Demand(r Replica) float64 {
	return float64(r.KVTokensInUse) + float64(r.QueueDepth)*a.AvgInputTokens
}

// Analyze assesses one model. Supply, utilization and spare capacity count
// ready replicas only; required capacity also counts the loading replicas
// as supply to come. Spare capacity needs two replicas at least, and that
// the others could carry the demand below the scale-up threshold with the
// largest replica gone (the N−1 check).
func (a Analyzer) Analyze(s Signals) Result {
	var res Result
	if len(s.Replicas) == 0 {
		return res
	}
	byVar := map[Variant]*VariantCapacity{}
	largest := 0.0
	for _, r := range s.Replicas {
		c, d := a.Capacity(r), a.Demand(r)
		largest = max(largest, c)
		res.TotalSupply += c
		res.TotalDemand += d
		v := byVar[r.Variant]
		if v == nil {
			v = &VariantCapacity{Variant: r.Variant, CostPerReplica: r.CostPerHour}
			byVar[r.Variant] = v
		}
		v.Supply += c
		v.Demand += d
		v.Replicas++
	}
	for _, v := range byVar {
		res.Variants = append(res.Variants, *v)
	}
	slices.SortFunc(res.Variants, func(x, y VariantCapacity) int {
		return cmp.Or(cmp.Compare(x.CostPerReplica, y.CostPerReplica), cmp.Compare(x.Variant.GPU, y.Variant.GPU), cmp.Compare(x.Variant.TP, y.Variant.TP))
	})
	if res.TotalSupply > 0 {
		res.Utilization = res.TotalDemand / res.TotalSupply
	}
	pending := float64(s.PendingKVCapacityTokens) * a.KVCacheThreshold
	if req := res.TotalDemand/a.ScaleUpThreshold - (res.TotalSupply + pending); req > 0 {
		res.Required = req
		return res
	}
	if len(s.Replicas) < 2 || s.PendingReplicas > 0 {
		return res
	}
	spare := res.TotalSupply - res.TotalDemand/a.ScaleDownBoundary
	if spare > 0 && res.TotalDemand <= (res.TotalSupply-largest)*a.ScaleUpThreshold {
		res.Spare = spare
	}
	return res
}
