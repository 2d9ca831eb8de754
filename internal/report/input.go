package report

import (
	"math"
	"strings"
	"time"

	"servesim/internal/tracev2"
)

// SLOTarget holds one class's goodput targets in ms; 0 means the dimension is not
// gated. The JSON names are the spec's snake-case ones (docs/calibrate.md §10).
type SLOTarget struct {
	TTFTMs float64 `json:"ttft_ms,omitempty"`
	ITLMs  float64 `json:"itl_ms,omitempty"`
	E2EMs  float64 `json:"e2e_ms,omitempty"`
}

func (t SLOTarget) empty() bool { return t.TTFTMs <= 0 && t.ITLMs <= 0 && t.E2EMs <= 0 }

// ServerConfig is the deployment as the trace header's `server` map states it, or
// as the simulator resolved it. A nil pointer (or empty Model) means "absent".
type ServerConfig struct {
	Model                string
	TensorParallel       *int
	MaxNumSeqs           *int
	BlockSize            *int
	GPUMemoryUtilization *float64
	MaxModelLen          *int64
}

// ObservedKV is the header's observed_kv_metrics block (the fields report uses).
type ObservedKV struct {
	Source  string  // tiered or gpu-prefix-cache-fallback
	HitRate float64 // 0..1
}

// TraceHeader holds the trace header fields that calibration reads (docs/tracev2.md §3).
// The caller fills it from its decoded header.
type TraceHeader struct {
	Mode              string
	WarmUpRequests    int64
	WorkloadSeed      *int64
	WorkloadSpec      string
	Server            ServerConfig
	MeasuredRTTMs     float64 // network.measured_rtt_ms; 0 when absent
	GoodputSLOTargets map[string]SLOTarget
	ObservedKV        *ObservedKV
	// Deployment is the deployment the trace states, as deployment-YAML keys
	// (tracev2.Header.Deployment); Sources says where each key came from
	// (measured, declared, derived, absent), keyed without "deployment.".
	Deployment map[string]any
	Sources    map[string]string
}

// SimMetrics is what calibrate reads from replay's summary JSON (--sim-metrics).
type SimMetrics struct {
	CacheHitRate *float64 // nil when absent
	// Deployment is the deployment the simulation ran, as deployment-YAML
	// keys; nil when absent.
	Deployment map[string]any
	// ClassGateway and TenantGateway are the simulated requests let go
	// before they ran, per SLO class and per tenant (the summary's
	// per_class and per_tenant blocks); nil when absent.
	ClassGateway, TenantGateway map[string]GatewayCounts
}

// Input is everything one calibration reads. Trace rows must already be on a
// normalised time origin (docs/tracev2.md §5); ITL timestamps on the same origin (only
// their differences are used).
type Input struct {
	Header TraceHeader
	Trace  []tracev2.Record
	// TraceLocs[i] names where Trace[i] came from, e.g. "trace.csv:12"; used in
	// duplicate-id errors. Optional: nil gives "trace row <i+1>".
	TraceLocs []string
	Sim       []tracev2.SimResult
	// SimLocs[i] names where Sim[i] came from; optional like TraceLocs.
	SimLocs []string
	// TraceName and SimName name the two inputs in the message that
	// refuses results of another trace (Build); "" gives "the
	// trace" and "the SimResults".
	TraceName, SimName string
	// SimLo and SimHi, when given, are the results of the runs at the ends
	// of the 90% interval (replay --interval): the report then says how
	// often the real values fall inside (Coverage).
	SimLo, SimHi []tracev2.SimResult
	// ITL holds the ITL CSV rows, in any order. ITLGiven says an ITL file was read
	// (it may still be empty); without it the itl metric is absent.
	ITL      []tracev2.ITLRow
	ITLGiven bool
	// SimMetrics is nil without --sim-metrics.
	SimMetrics *SimMetrics
	// RequestedOutputTokens optionally maps request_id to the output length the
	// workload asked for (max_tokens), sharpening the truncation check.
	RequestedOutputTokens map[int64]int
	// SameModel says whether two model names name the same model in the
	// config verdict ("Qwen/Qwen3-14B" and "qwen3-14b"); nil compares them
	// case-insensitively.
	SameModel func(a, b string) bool
}

// TTFT reference points (docs/calibrate.md §1 --ttft-from).
const (
	TTFTFromFirstChunk = "first-chunk"
	TTFTFromFirstToken = "first-token"
)

// Config holds the calibration settings (docs/calibrate.md §1). Start from
// DefaultConfig: the zero value is not the default.
type Config struct {
	// WarmupRequests excludes rows with request_id below it; -1 takes the header's
	// warm_up_requests.
	WarmupRequests int64
	// WarmupDuration also excludes rows whose normalised arrival is below it; 0 = off.
	WarmupDuration time.Duration
	// NetworkRTTUs is added to the sim side; -1 takes the header's RTT.
	NetworkRTTUs int64
	// NetworkBandwidthMbps gives the payload delay; 0 = none.
	NetworkBandwidthMbps float64
	// TTFTFrom is TTFTFromFirstChunk (also for "") or TTFTFromFirstToken.
	TTFTFrom string
	// SLOOverrides overrides the header's goodput targets per class and per
	// dimension: a positive field replaces the header's value for that class.
	SLOOverrides map[string]SLOTarget
	// TTFTMAPEThreshold is the TTFT tolerance verdict's threshold (fraction).
	TTFTMAPEThreshold float64
	// HitRateTolerancePP is the hit-rate verdict's tolerance in percentage points.
	HitRateTolerancePP float64
	// Validity tunes the run-validity checks; zero fields take their defaults.
	Validity ValidityConfig
}

// DefaultConfig returns the defaults of docs/calibrate.md §1.
func DefaultConfig() Config {
	return Config{
		WarmupRequests:     -1,
		NetworkRTTUs:       -1,
		TTFTFrom:           TTFTFromFirstChunk,
		TTFTMAPEThreshold:  0.15,
		HitRateTolerancePP: 5.0,
	}
}

func finiteNonNeg(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 }

// validate checks the settings and resolves the header defaults.
func (c Config) resolve(h TraceHeader) (settings, error) {
	var s settings
	switch {
	case c.WarmupRequests == -1:
		s.warmupN = h.WarmUpRequests
	case c.WarmupRequests < 0:
		return s, inputErrorf("report: warm-up requests %d is negative (use -1 for the header's value)", c.WarmupRequests)
	default:
		s.warmupN = c.WarmupRequests
	}
	if c.WarmupDuration < 0 {
		return s, inputErrorf("report: warm-up duration %s is negative", c.WarmupDuration)
	}
	s.warmupDurUs = c.WarmupDuration.Microseconds()
	switch {
	case c.NetworkRTTUs == -1:
		if finiteNonNeg(h.MeasuredRTTMs) {
			s.rttUs = int64(h.MeasuredRTTMs * 1000) // truncated, as the spec says
		}
	case c.NetworkRTTUs < 0:
		return s, inputErrorf("report: network RTT %d us is negative (use -1 for the header's value)", c.NetworkRTTUs)
	default:
		s.rttUs = c.NetworkRTTUs
	}
	if !finiteNonNeg(c.NetworkBandwidthMbps) {
		return s, inputErrorf("report: network bandwidth %v Mb/s must be finite and >= 0", c.NetworkBandwidthMbps)
	}
	s.bandwidthMbps = c.NetworkBandwidthMbps
	switch c.TTFTFrom {
	case "", TTFTFromFirstChunk:
		s.firstToken = false
	case TTFTFromFirstToken:
		s.firstToken = true
	default:
		return s, inputErrorf("report: ttft-from %q is not %q or %q", c.TTFTFrom, TTFTFromFirstChunk, TTFTFromFirstToken)
	}
	if !finiteNonNeg(c.TTFTMAPEThreshold) {
		return s, inputErrorf("report: ttft MAPE threshold %v must be finite and >= 0", c.TTFTMAPEThreshold)
	}
	if !finiteNonNeg(c.HitRateTolerancePP) {
		return s, inputErrorf("report: hit-rate tolerance %v pp must be finite and >= 0", c.HitRateTolerancePP)
	}
	for class, t := range c.SLOOverrides {
		if !finiteNonNeg(t.TTFTMs) || !finiteNonNeg(t.ITLMs) || !finiteNonNeg(t.E2EMs) {
			return s, inputErrorf("report: SLO target for class %q must be finite and >= 0", class)
		}
	}
	v, err := c.Validity.withDefaults()
	if err != nil {
		return s, err
	}
	s.validity = v
	s.targets = mergeTargets(h.GoodputSLOTargets, c.SLOOverrides)
	s.ttftThreshold = c.TTFTMAPEThreshold
	s.hitTolPP = c.HitRateTolerancePP
	return s, nil
}

// settings are the resolved values one Build works with.
type settings struct {
	warmupN       int64
	warmupDurUs   int64
	rttUs         int64
	bandwidthMbps float64
	firstToken    bool
	targets       map[string]SLOTarget
	ttftThreshold float64
	hitTolPP      float64
	validity      ValidityConfig
}

// mergeTargets overlays the CLI overrides on the header's targets, per class and
// dimension, and drops classes left with no target.
func mergeTargets(header, over map[string]SLOTarget) map[string]SLOTarget {
	out := make(map[string]SLOTarget)
	for class, t := range header {
		out[className(class)] = t
	}
	for class, o := range over {
		t := out[className(class)]
		if o.TTFTMs > 0 {
			t.TTFTMs = o.TTFTMs
		}
		if o.ITLMs > 0 {
			t.ITLMs = o.ITLMs
		}
		if o.E2EMs > 0 {
			t.E2EMs = o.E2EMs
		}
		out[className(class)] = t
	}
	for class, t := range out {
		if t.empty() {
			delete(out, class)
		}
	}
	return out
}

// className names the empty SLO class "default" (docs/calibrate.md §8).
func className(c string) string {
	if c == "" {
		return "default"
	}
	return c
}

// HeaderFrom extracts what calibration reads from a decoded trace header. In
// tracev2.Server a zero field is an absent key, so zeros become nil here; a nil
// header gives the zero TraceHeader.
func HeaderFrom(h *tracev2.Header) TraceHeader {
	if h == nil {
		return TraceHeader{}
	}
	t := TraceHeader{
		Mode:           h.Mode,
		WarmUpRequests: int64(h.WarmUpRequests),
		WorkloadSeed:   h.WorkloadSeed,
		WorkloadSpec:   h.WorkloadSpec,
	}
	if s := h.Server; s != nil {
		t.Server.Model = s.Model
		t.Server.TensorParallel = positive(s.TensorParallel)
		t.Server.MaxNumSeqs = positive(s.MaxNumSeqs)
		t.Server.BlockSize = positive(s.BlockSize)
		t.Server.GPUMemoryUtilization = positive(s.GPUMemoryUtilization)
		t.Server.MaxModelLen = positive(s.MaxModelLen)
	}
	if h.Network != nil {
		t.MeasuredRTTMs = h.Network.MeasuredRTTMs
	}
	if len(h.GoodputSLOTargets) > 0 {
		t.GoodputSLOTargets = make(map[string]SLOTarget, len(h.GoodputSLOTargets))
		for class, v := range h.GoodputSLOTargets {
			t.GoodputSLOTargets[class] = SLOTarget{TTFTMs: v.TTFTMs, ITLMs: v.ITLMs, E2EMs: v.E2EMs}
		}
	}
	if kv := h.ObservedKVMetrics; kv != nil {
		t.ObservedKV = &ObservedKV{Source: kv.Source, HitRate: kv.HitRate}
	}
	t.Deployment = h.Deployment()
	if h.XExt != nil {
		for path, src := range h.XExt.Sources {
			if k, ok := strings.CutPrefix(path, "deployment."); ok {
				if t.Sources == nil {
					t.Sources = map[string]string{}
				}
				t.Sources[k] = src
			}
		}
	}
	return t
}

func positive[T int | int64 | float64](v T) *T {
	if v <= 0 {
		return nil
	}
	return &v
}
