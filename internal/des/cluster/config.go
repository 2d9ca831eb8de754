package cluster

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"servesim/internal/des/instance"
	"servesim/internal/des/sim"
)

// AdmissionPolicy decides which arriving requests enter (docs/simulator.md §10).
type AdmissionPolicy string

// Admission policies.
const (
	AlwaysAdmit AdmissionPolicy = "always-admit"
	TokenBucket AdmissionPolicy = "token-bucket"
	RejectAll   AdmissionPolicy = "reject-all"
)

// RoutingPolicy picks an instance for a request (docs/simulator.md §10).
type RoutingPolicy string

// Routing policies.
const (
	RoundRobin       RoutingPolicy = "round-robin"
	Random           RoutingPolicy = "random"
	LeastLoaded      RoutingPolicy = "least-loaded"      // min queue + batch + in-flight
	LeastOutstanding RoutingPolicy = "least-outstanding" // min in-flight
	AlwaysBusiest    RoutingPolicy = "always-busiest"    // max queue + batch + in-flight (tests)
	Weighted         RoutingPolicy = "weighted"          // argmax of weighted scorers
)

// RoutingPolicies lists the routing policies, default first.
func RoutingPolicies() []RoutingPolicy {
	return []RoutingPolicy{RoundRobin, Random, LeastLoaded, LeastOutstanding, AlwaysBusiest, Weighted}
}

// Scorer names (docs/simulator.md §10 table).
const (
	ScorerPrefixAffinity     = "prefix-affinity"
	ScorerPrecisePrefixCache = "precise-prefix-cache"
	ScorerQueueDepth         = "queue-depth"
	ScorerKVUtilization      = "kv-utilization"
	ScorerLoadBalance        = "load-balance"
	ScorerNoHitLRU           = "no-hit-lru"
)

// ScorerNames lists the scorers.
func ScorerNames() []string {
	return []string{ScorerPrefixAffinity, ScorerPrecisePrefixCache, ScorerQueueDepth, ScorerKVUtilization, ScorerLoadBalance, ScorerNoHitLRU}
}

// DefaultScorers is the weighted policy's default.
const DefaultScorers = "prefix-affinity:3,queue-depth:2,kv-utilization:2"

// Scorer is one weighted scorer.
type Scorer struct {
	Name   string
	Weight float64
}

// ParseScorers reads "name:weight,name:weight,...". Weights must be
// positive numbers; names known and not repeated.
func ParseScorers(s string) ([]Scorer, error) {
	var out []Scorer
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		name, w, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("scorer %q: want name:weight", part)
		}
		name = strings.TrimSpace(name)
		known := false
		for _, n := range ScorerNames() {
			known = known || n == name
		}
		if !known {
			return nil, fmt.Errorf("unknown scorer %q (%s)", name, strings.Join(ScorerNames(), ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("scorer %q given twice", name)
		}
		seen[name] = true
		v, err := strconv.ParseFloat(strings.TrimSpace(w), 64)
		if err != nil || !(v > 0) || v > 1e12 {
			return nil, fmt.Errorf("scorer %q: weight %q must be a positive number", name, w)
		}
		out = append(out, Scorer{Name: name, Weight: v})
	}
	return out, nil
}

// Decider picks which requests disaggregate (docs/simulator.md §12).
type Decider string

// P/D deciders.
const (
	DecideNever           Decider = "never"
	DecideAlways          Decider = "always"
	DecidePrefixThreshold Decider = "prefix-threshold"
)

// PD configures prefill/decode disaggregation. It is on when
// PrefillInstances > 0: instances 0..PrefillInstances−1 form the prefill
// pool, the rest the decode pool. Requests that do not disaggregate run
// whole on the decode pool.
type PD struct {
	PrefillInstances int
	Decider          Decider // "" = never
	PrefixThreshold  int     // prefix-threshold: disaggregate if prompt − cached tokens > this
	// KV transfer: ⌈BaseLatencyUs + bytes / (BandwidthBytesPerUs / k)⌉ µs,
	// at least 1, with bytes = ⌈prompt/b⌉·b·KVBytesPerToken and k the
	// transfers in flight including this one when Contention, else 1.
	BandwidthBytesPerUs float64
	BaseLatencyUs       int64
	Contention          bool
	KVBytesPerToken     float64 // at the prefill pool's tensor parallelism
}

// Config configures a cluster run.
type Config struct {
	// Instances holds one configuration per instance; the cluster sets ID,
	// OnDone and FastForwardBound.
	Instances []instance.Config
	HorizonUs int64 // 0 = run until every event is processed
	Seed      int64 // the router stream is seed XOR FNV-1a-64("router")

	Admission          AdmissionPolicy // "" = always-admit
	BucketCapacity     float64         // token-bucket capacity (tokens)
	BucketRefillPerSec float64         // token-bucket refill (tokens per second)
	AdmissionLatencyUs int64
	RoutingLatencyUs   int64

	Routing RoutingPolicy // "" = round-robin
	Scorers []Scorer      // weighted only; nil = DefaultScorers
	// SnapshotRefreshUs: queue depth, batch size, KV utilisation and hit
	// rate are re-read when a decision finds them older (0 = live).
	SnapshotRefreshUs int64
	// CacheSignalDelayUs: the precise-prefix-cache scorer sees each
	// instance's prefix index as of its last refresh, renewed when older
	// (0 = live).
	CacheSignalDelayUs int64

	PD PD
	// Encode is the encode pool for requests with media tokens; off when
	// Encode.Instances is 0.
	Encode Encode

	// Gateway: SLO tiers, tier-aware admission, tenant budgets and flow
	// control (gatewayconfig.go).
	Gateway Gateway
	// Fleet, if set, lets instances come and go (node pools, lifecycle,
	// autoscaler); Instances are then the replicas present at the start.
	Fleet *Fleet

	// Client is the load generator's cap on requests in flight (zero: an
	// open loop). A capped client's slot frees at a completion, so the
	// instances stop their inline runs at every engine event, as with
	// MayInject.
	Client sim.Client

	// OnDone is called after the sink for every request that becomes
	// terminal during the run; a session manager injects follow-ups here.
	OnDone func(res *instance.Result, r *instance.Request)
	// MayInject says OnDone may call Inject. Instances then stop their
	// inline runs at every engine event (a completion anywhere may create
	// an arrival before any cluster event now pending).
	MayInject bool
	// Decisions, if set, receives one JSON line per routing decision with
	// every candidate's signals and scores (--trace-level decisions).
	Decisions io.Writer
	// CounterfactualK, when positive, scores every routing decision's
	// candidates for its regret (regret.go), summarised in the outcome;
	// the decision lines then add the regret and the top K candidates.
	// At most MaxCounterfactualK.
	CounterfactualK int
	// Observer, if set, sees routing, refusals, KV transfers and every
	// instance's finished requests (the timeline).
	Observer Observer
}

func (c *Config) validate() error {
	var errs []string
	n := len(c.Instances)
	if n == 0 {
		errs = append(errs, "no instances")
	}
	for i := range c.Instances {
		if c.Instances[i].OnDone != nil {
			errs = append(errs, fmt.Sprintf("instance %d: OnDone is set by the cluster", i))
		}
		// Routers hash prompts once, with one block size, for every instance.
		if b, b0 := c.Instances[i].KV.BlockSize, c.Instances[0].KV.BlockSize; b != b0 {
			errs = append(errs, fmt.Sprintf("instance %d: block size %d differs from instance 0's %d", i, b, b0))
		}
	}
	if c.HorizonUs < 0 {
		errs = append(errs, fmt.Sprintf("horizon %d µs is negative", c.HorizonUs))
	}
	switch c.Admission {
	case "", AlwaysAdmit, RejectAll, TierShed, GAIELegacy:
	case TokenBucket:
		if !(c.BucketCapacity > 0) || c.BucketRefillPerSec < 0 {
			errs = append(errs, fmt.Sprintf("token bucket capacity %g must be positive and refill %g not negative", c.BucketCapacity, c.BucketRefillPerSec))
		}
	default:
		errs = append(errs, fmt.Sprintf("unknown admission policy %q (always-admit, token-bucket, reject-all, tier-shed, gaie-legacy)", c.Admission))
	}
	if c.CounterfactualK < 0 || c.CounterfactualK > MaxCounterfactualK {
		errs = append(errs, fmt.Sprintf("counterfactual k %d must be in 0..%d", c.CounterfactualK, MaxCounterfactualK))
	}
	if c.AdmissionLatencyUs < 0 || c.RoutingLatencyUs < 0 || c.SnapshotRefreshUs < 0 || c.CacheSignalDelayUs < 0 {
		errs = append(errs, "admission and routing latencies, snapshot refresh interval and cache signal delay must not be negative")
	}
	known := c.Routing == ""
	for _, p := range RoutingPolicies() {
		known = known || p == c.Routing
	}
	if !known {
		errs = append(errs, fmt.Sprintf("unknown routing policy %q (round-robin, random, least-loaded, least-outstanding, always-busiest, weighted)", c.Routing))
	}
	for _, s := range c.Scorers {
		if !(s.Weight > 0) {
			errs = append(errs, fmt.Sprintf("scorer %s: weight %g must be positive", s.Name, s.Weight))
		}
	}
	if len(c.Scorers) > 0 && c.Routing != Weighted {
		errs = append(errs, fmt.Sprintf("scorers given for routing policy %q; they need weighted", c.routing()))
	}
	if p := c.PD; p.PrefillInstances != 0 || p.Decider != "" {
		switch {
		case p.PrefillInstances <= 0 || p.PrefillInstances >= n:
			errs = append(errs, fmt.Sprintf("P/D needs 1..%d prefill instances out of %d, got %d", n-1, n, p.PrefillInstances))
		case !(p.BandwidthBytesPerUs > 0) || p.BaseLatencyUs < 0 || !(p.KVBytesPerToken > 0) || p.PrefixThreshold < 0:
			errs = append(errs, "P/D needs a positive transfer bandwidth and KV bytes per token, and a non-negative base latency and prefix threshold")
		}
		switch p.Decider {
		case "", DecideNever, DecideAlways, DecidePrefixThreshold:
		default:
			errs = append(errs, fmt.Sprintf("unknown P/D decider %q (never, always, prefix-threshold)", p.Decider))
		}
	}
	if e := c.Encode; e.Instances < 0 || e.MaxTokens < 0 || (e.Instances > 0 && e.Latency == nil) {
		errs = append(errs, fmt.Sprintf("encode pool: %d instances and max tokens %d must not be negative, and encoders need a latency model", e.Instances, e.MaxTokens))
	}
	errs = append(errs, c.Gateway.problems()...)
	if c.Gateway.FlowControl && c.Encode.on() {
		errs = append(errs, "the encode pool does not work with flow control")
	}
	if c.Gateway.InFlightEviction && c.pdOn() {
		errs = append(errs, "in-flight eviction does not work with P/D")
	}
	if c.Fleet != nil && n > 0 {
		errs = append(errs, c.Fleet.check(c)...)
	}
	if len(errs) > 0 {
		return errors.New("cluster config: " + strings.Join(errs, "; "))
	}
	return nil
}

func (c *Config) routing() RoutingPolicy {
	if c.Routing == "" {
		return RoundRobin
	}
	return c.Routing
}

func (c *Config) pdOn() bool { return c.PD.PrefillInstances > 0 }
