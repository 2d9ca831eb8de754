package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"servesim/internal/des/instance"
)

// Tier-aware admission policies (docs/simulator.md §10.1).
const (
	// TierShed refuses requests of a priority below TierShedMinPriority
	// while the busiest instance's queue depth + batch size exceeds
	// TierShedThreshold.
	TierShed AdmissionPolicy = "tier-shed"
	// GAIELegacy refuses sheddable requests (priority < 0) while the
	// pool-average saturation is at least 1; others always pass.
	GAIELegacy AdmissionPolicy = "gaie-legacy"
)

// AdmissionPolicies lists the admission policies, default first.
func AdmissionPolicies() []AdmissionPolicy {
	return []AdmissionPolicy{AlwaysAdmit, TokenBucket, RejectAll, TierShed, GAIELegacy}
}

// Saturation detectors of the gateway.
const (
	// DetectUtilization: mean over instances of max(queue depth / QD
	// threshold, KV utilisation / KV threshold), from signals renewed on
	// the routing's snapshot interval.
	DetectUtilization = "utilization"
	// DetectConcurrency: requests in flight on the instances / MaxConcurrency.
	DetectConcurrency = "concurrency"
	// DetectNever: never saturated.
	DetectNever = "never"
)

// Dispatch orders of the flow-control queue.
const (
	OrderFIFO        = "fifo"         // the earliest arrival of any band
	OrderPriority    = "priority"     // the most urgent band first
	OrderSLODeadline = "slo-deadline" // bands by priority, then the earliest deadline within a flow
)

// Fairness policies between the flows (tenants) of a band.
const (
	FairGlobalStrict = "global-strict" // the flow whose head arrived first
	FairRoundRobin   = "round-robin"   // tenants in turn, in sorted order
)

// llm-d's defaults, which the gateway takes as its own.
const (
	DefaultQDThreshold    = 5.0
	DefaultKVThreshold    = 0.8
	DefaultDispatchTickUs = 1000
	DefaultMaxConcurrency = 64
	DefaultTierShedMinPri = 3 // standard and critical pass
)

// Gateway configures what sits in front of the routing: the SLO tiers'
// priorities, the tier-aware admission policies, tenant budgets and flow
// control (docs/simulator.md §10.1). Zero values are the defaults
// (see withDefaults).
type Gateway struct {
	// Priorities override instance.DefaultClassPriorities (llm-d's: critical
	// 4, standard 3, batch −1, sheddable −2, background −3); unknown and
	// empty classes map like standard. Negative = sheddable.
	Priorities map[string]int

	TierShedThreshold   int // tier-shed: busiest instance's queue + batch above which it sheds
	TierShedMinPriority int // tier-shed: the lowest priority admitted while shedding (llm-d's tiers: 3)

	QDThreshold float64 // utilisation detector; 0 = 5
	KVThreshold float64 // utilisation detector, in (0, 1]; 0 = 0.8

	// TenantBudgets: each named tenant's share in [0, 1] of the cluster's
	// concurrent slots (Σ max_num_seqs); a sheddable request of a tenant at
	// or over its share is refused. Tenants not named are unlimited.
	TenantBudgets map[string]float64

	FlowControl      bool
	Detector         string // utilization (default), concurrency, never
	MaxConcurrency   int    // concurrency detector; 0 = 64
	DispatchOrder    string // fifo (default), priority, slo-deadline
	Fairness         string // global-strict (default), round-robin
	PerBandCapacity  int    // 0 = unlimited
	MaxQueueDepth    int    // all bands; 0 = unlimited
	QueueShedding    bool   // a full queue sheds its least urgent sheddable entry instead of refusing
	DispatchTickUs   int64  // 0 = 1000
	TTLUs            int64  // time a request may wait in the queue; 0 = no limit
	InFlightEviction bool
	// SLOTargetsUs: per-class TTFT targets of the slo-deadline order, for
	// requests without their own (instance.Request.SLOTargetUs).
	SLOTargetsUs map[string]int64
}

func (g *Gateway) withDefaults() Gateway {
	d := *g
	if d.QDThreshold == 0 {
		d.QDThreshold = DefaultQDThreshold
	}
	if d.KVThreshold == 0 {
		d.KVThreshold = DefaultKVThreshold
	}
	if d.Detector == "" {
		d.Detector = DetectUtilization
	}
	if d.MaxConcurrency == 0 {
		d.MaxConcurrency = DefaultMaxConcurrency
	}
	if d.DispatchOrder == "" {
		d.DispatchOrder = OrderFIFO
	}
	if d.Fairness == "" {
		d.Fairness = FairGlobalStrict
	}
	if d.DispatchTickUs == 0 {
		d.DispatchTickUs = DefaultDispatchTickUs
	}
	return d
}

func (g *Gateway) problems() []string {
	var errs []string
	if g.TierShedThreshold < 0 || g.PerBandCapacity < 0 || g.MaxQueueDepth < 0 || g.MaxConcurrency < 0 || g.DispatchTickUs < 0 || g.TTLUs < 0 {
		errs = append(errs, "tier-shed threshold, band and queue capacities, max concurrency, dispatch tick and TTL must not be negative")
	}
	if !(g.QDThreshold >= 0) || !(g.KVThreshold >= 0 && g.KVThreshold <= 1) {
		errs = append(errs, fmt.Sprintf("queue-depth threshold %g must be positive and KV threshold %g in (0, 1]", g.QDThreshold, g.KVThreshold))
	}
	for _, t := range slices.Sorted(maps.Keys(g.TenantBudgets)) {
		if v := g.TenantBudgets[t]; !(v >= 0 && v <= 1) {
			errs = append(errs, fmt.Sprintf("tenant %q: budget %g outside [0, 1]", t, v))
		}
	}
	for _, c := range slices.Sorted(maps.Keys(g.SLOTargetsUs)) {
		if g.SLOTargetsUs[c] < 0 {
			errs = append(errs, fmt.Sprintf("SLO target of class %q is negative", c))
		}
	}
	for _, f := range []struct {
		what, v string
		want    []string
	}{
		{"saturation detector", g.Detector, []string{"", DetectUtilization, DetectConcurrency, DetectNever}},
		{"dispatch order", g.DispatchOrder, []string{"", OrderFIFO, OrderPriority, OrderSLODeadline}},
		{"fairness policy", g.Fairness, []string{"", FairGlobalStrict, FairRoundRobin}},
	} {
		if !slices.Contains(f.want, f.v) {
			errs = append(errs, fmt.Sprintf("unknown %s %q (%s)", f.what, f.v, strings.Join(f.want[1:], ", ")))
		}
	}
	if g.InFlightEviction && !g.FlowControl {
		errs = append(errs, "in-flight eviction needs flow control")
	}
	return errs
}

// Detectors, DispatchOrders and FairnessPolicies list the choices, default first.
func Detectors() []string        { return []string{DetectUtilization, DetectConcurrency, DetectNever} }
func DispatchOrders() []string   { return []string{OrderFIFO, OrderPriority, OrderSLODeadline} }
func FairnessPolicies() []string { return []string{FairGlobalStrict, FairRoundRobin} }

// ParseTenantBudgets reads "tenant:share,..." with shares in [0, 1]; ""
// is none.
func ParseTenantBudgets(s string) (map[string]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(part), ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("tenant budget %q: want tenant:share", part)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("tenant %q given twice", name)
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(x >= 0 && x <= 1) {
			return nil, fmt.Errorf("tenant %q: share %q must be a number in [0, 1]", name, v)
		}
		out[name] = x
	}
	return out, nil
}

// ParseSLOTargets reads "class=duration,..." (Go durations, e.g.
// critical=100ms) into µs; "" is none.
func ParseSLOTargets(s string) (map[string]int64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]int64{}
	for _, part := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("SLO target %q: want class=duration", part)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("class %q given twice", name)
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 || d > 24*time.Hour {
			return nil, fmt.Errorf("class %q: target %q must be a positive duration up to 24h, e.g. 250ms", name, v)
		}
		out[name] = d.Microseconds()
	}
	return out, nil
}

// tiers maps SLO classes to llm-d priorities, overrides merged in.
type tiers map[string]int

func newTiers(over map[string]int) tiers {
	m := instance.DefaultClassPriorities()
	maps.Copy(m, over)
	return m
}

// priority of a class; unknown and empty classes are standard.
func (t tiers) priority(class string) int {
	if v, ok := t[class]; ok {
		return v
	}
	return t["standard"]
}
