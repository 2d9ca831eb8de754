package cluster

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"servesim/internal/des/autoscale"
	"servesim/internal/des/instance"
)

// Fleet makes the set of instances change during a run (docs/fleet.md):
// node pools that hold the replicas' GPUs, the lifecycle of each
// replica (loading, warm-up, drain), and optionally an autoscaler. A nil
// Fleet is the fixed set of Config.Instances.
type Fleet struct {
	Pools      []NodePool
	Lifecycle  Lifecycle
	Autoscaler *Autoscaler // nil: the fleet keeps its initial replicas
	// ReportUs is the width of the report's time buckets (0 = one minute).
	ReportUs int64
}

// NodePool is a pool of identical nodes. A replica takes TP GPUs of one node.
type NodePool struct {
	Name        string
	GPU         string
	GPUsPerNode int
	TP          int // GPUs per replica (1..GPUsPerNode)
	// InitialNodes are ready at time 0; the autoscaler may grow the pool up
	// to MaxNodes (each new node ready after Provision) and gives empty
	// nodes back down to MinNodes.
	InitialNodes, MinNodes, MaxNodes int
	CostPerHour                      float64 // dollars per node-hour
	Provision                        Delay
	// Instance is the configuration of the pool's replicas (nil: the
	// cluster's first instance configuration).
	Instance *instance.Config
}

// Delay is a duration drawn from a normal distribution truncated at 0
// (StddevUs 0: constant).
type Delay struct {
	MeanUs, StddevUs int64
}

// DrainPolicy is what a replica being removed does with its requests.
type DrainPolicy string

// Drain policies.
const (
	// DrainWait stops routing to the replica at once; its GPUs are freed
	// when its last request in flight ends.
	DrainWait DrainPolicy = "wait"
	// DrainRedirect is DrainWait, and the requests not yet scheduled there
	// are routed again at once to the replicas that stay.
	DrainRedirect DrainPolicy = "redirect"
	// DrainImmediate frees the GPUs at once: the replica's requests are
	// cut (their work and KV blocks dropped) and routed again to the
	// replicas that stay, or rejected when none does.
	DrainImmediate DrainPolicy = "immediate"
)

// Lifecycle is how replicas come and go.
type Lifecycle struct {
	Loading Delay // from placement to routable (model weights loading)
	// The first WarmUpRequests requests a replica finishes are served
	// while its steps take WarmUpFactor times as long (≥ 1).
	WarmUpRequests int
	WarmUpFactor   float64
	Drain          DrainPolicy // "" = wait
	// ColdStart makes the initial replicas load too; by default they are
	// ready at time 0 (already deployed).
	ColdStart bool
}

// Autoscaler configures the periodic scaling pipeline: collect signals,
// analyze (V2 saturation), stabilize, decide, actuate after a delay.
type Autoscaler struct {
	IntervalUs       int64 // tick period (> 0); the first tick is at 0
	ActuationDelayUs int64 // from decision to actuation
	// ScrapeIntervalUs is the metrics scrape period: a tick sees the
	// signals of the last scrape at or before it (0: live).
	ScrapeIntervalUs         int64
	UpWindowUs, DownWindowUs int64 // stabilization windows
	Analyzer                 autoscale.Analyzer
	// MinReplicas (at least 1) and MaxReplicas (0: the pools' bound) bound
	// the replicas counted ready or loading.
	MinReplicas, MaxReplicas int
}

// DefaultAutoscaler is the production timing: a 30 s tick, 240 s windows,
// no actuation delay, the default analyzer.
func DefaultAutoscaler() Autoscaler {
	return Autoscaler{IntervalUs: 30_000_000, UpWindowUs: 240_000_000, DownWindowUs: 240_000_000,
		Analyzer: autoscale.DefaultAnalyzer(), MinReplicas: 1}
}

// maxFleetNodes bounds the nodes of all pools (each may hold replicas).
const maxFleetNodes = 1 << 16

// Check validates f for the cluster configuration c (its instances are
// the replicas at the start), as New would.
func (f *Fleet) Check(c *Config) error {
	if errs := f.check(c); len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

func (f *Fleet) check(c *Config) []string {
	var errs []string
	if len(f.Pools) == 0 {
		errs = append(errs, "fleet: no node pools")
	}
	if c.pdOn() {
		errs = append(errs, "fleet: node pools and autoscaling do not apply to P/D pools")
	}
	if c.Observer != nil {
		errs = append(errs, "fleet: the timeline does not follow instances that come and go")
	}
	if c.needsGateway() || c.Encode.on() {
		errs = append(errs, "fleet: the gateway (tier admission, budgets, flow control) and the encode pool do not follow instances that come and go")
	}
	slots, nodes := 0, 0
	names := map[string]bool{}
	variants := map[autoscale.Variant]bool{}
	for _, p := range f.Pools {
		v := autoscale.Variant{GPU: p.GPU, TP: p.TP}
		switch {
		case p.Name == "" || names[p.Name]:
			errs = append(errs, fmt.Sprintf("fleet: pool name %q empty or repeated", p.Name))
		case p.GPU == "" || variants[v]:
			errs = append(errs, fmt.Sprintf("fleet: pool %s: GPU type %q empty, or another pool has it at TP %d (name distinct GPU types)", p.Name, p.GPU, p.TP))
		case p.GPUsPerNode < 1 || p.TP < 1 || p.TP > p.GPUsPerNode:
			errs = append(errs, fmt.Sprintf("fleet: pool %s: %d GPUs per node must be at least 1 and hold TP %d", p.Name, p.GPUsPerNode, p.TP))
		case p.MinNodes < 0 || p.InitialNodes < p.MinNodes || p.MaxNodes < p.InitialNodes || p.MaxNodes > maxFleetNodes:
			errs = append(errs, fmt.Sprintf("fleet: pool %s: want 0 ≤ min %d ≤ initial %d ≤ max %d ≤ %d nodes", p.Name, p.MinNodes, p.InitialNodes, p.MaxNodes, maxFleetNodes))
		case !(p.CostPerHour >= 0) || math.IsInf(p.CostPerHour, 0):
			errs = append(errs, fmt.Sprintf("fleet: pool %s: cost per hour %v must be a non-negative number", p.Name, p.CostPerHour))
		case p.Provision.MeanUs < 0 || p.Provision.StddevUs < 0:
			errs = append(errs, fmt.Sprintf("fleet: pool %s: provisioning delay must not be negative", p.Name))
		case p.Instance != nil && p.Instance.KV.BlockSize != c.Instances[0].KV.BlockSize:
			errs = append(errs, fmt.Sprintf("fleet: pool %s: block size %d differs from instance 0's", p.Name, p.Instance.KV.BlockSize))
		default:
			slots += p.InitialNodes * (p.GPUsPerNode / p.TP)
		}
		names[p.Name], variants[v] = true, true
		nodes += max(p.MaxNodes, 0)
	}
	if nodes > maxFleetNodes {
		errs = append(errs, fmt.Sprintf("fleet: %d nodes in all pools, at most %d", nodes, maxFleetNodes))
	}
	if len(errs) == 0 && slots < len(c.Instances) {
		errs = append(errs, fmt.Sprintf("fleet: the initial nodes hold %d replicas, fewer than the %d instances", slots, len(c.Instances)))
	}
	l := f.Lifecycle
	if l.Loading.MeanUs < 0 || l.Loading.StddevUs < 0 || l.WarmUpRequests < 0 || (l.WarmUpRequests > 0 && !(l.WarmUpFactor >= 1 && l.WarmUpFactor <= 1e6)) {
		errs = append(errs, "fleet: loading delay and warm-up requests must not be negative, and a warm-up factor must be in [1, 1e6]")
	}
	switch l.Drain {
	case "", DrainWait, DrainRedirect, DrainImmediate:
	default:
		errs = append(errs, fmt.Sprintf("fleet: unknown drain policy %q (wait, redirect, immediate)", l.Drain))
	}
	if f.ReportUs != 0 && f.ReportUs < 1_000_000 {
		errs = append(errs, "fleet: report buckets must be at least 1 s wide")
	}
	if a := f.Autoscaler; a != nil {
		z := a.Analyzer
		switch {
		case a.IntervalUs <= 0 || a.ActuationDelayUs < 0 || a.ScrapeIntervalUs < 0 || a.UpWindowUs < 0 || a.DownWindowUs < 0:
			errs = append(errs, "fleet: autoscaler interval must be positive, and its delays and windows not negative")
		case !(z.KVCacheThreshold > 0 && z.KVCacheThreshold <= 1) || !(z.ScaleUpThreshold > 0 && z.ScaleUpThreshold <= 1) ||
			!(z.ScaleDownBoundary > 0 && z.ScaleDownBoundary < z.ScaleUpThreshold) || !(z.AvgInputTokens >= 0 && z.AvgInputTokens < 1e9):
			errs = append(errs, "fleet: analyzer thresholds must satisfy 0 < scale-down boundary < scale-up threshold ≤ 1, 0 < KV threshold ≤ 1, average input ≥ 0")
		case a.MinReplicas < 1 || a.MaxReplicas < 0 || (a.MaxReplicas > 0 && a.MaxReplicas < a.MinReplicas):
			errs = append(errs, fmt.Sprintf("fleet: autoscaler replicas min %d (≥ 1) and max %d (0 or ≥ min)", a.MinReplicas, a.MaxReplicas))
		}
	}
	return errs
}
