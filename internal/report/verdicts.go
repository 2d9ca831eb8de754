package report

import (
	"math"
)

// TTFTTolerance is the TTFT tolerance verdict (docs/calibrate.md §9).
type TTFTTolerance struct {
	MAPE      float64 `json:"mape"`
	Threshold float64 `json:"threshold"`
	Within    bool    `json:"within"`
}

// HitRate compares the observed and simulated prefix-cache hit rates.
type HitRate struct {
	RealHitRate float64 `json:"real_hit_rate"`
	SimHitRate  float64 `json:"sim_hit_rate"`
	AbsErrorPP  float64 `json:"abs_error_pp"`
	TolerancePP float64 `json:"tolerance_pp"`
	Within      bool    `json:"within"`
	Source      string  `json:"source"`
}

func ttftTolerance(c *Comparison, threshold float64) *TTFTTolerance {
	if c == nil {
		return nil
	}
	return &TTFTTolerance{MAPE: c.RequestLevel.MAPE, Threshold: threshold, Within: c.RequestLevel.MAPE <= threshold}
}

// hitRate builds the hit-rate verdict, or a warning when only one side exists.
func hitRate(h TraceHeader, sm *SimMetrics, tolPP float64) (*HitRate, string) {
	haveReal := h.ObservedKV != nil
	haveSim := sm != nil && sm.CacheHitRate != nil
	switch {
	case haveReal && haveSim:
		real, sim := h.ObservedKV.HitRate, *sm.CacheHitRate
		pp := math.Abs(sim-real) * 100
		return &HitRate{
			RealHitRate: real, SimHitRate: sim, AbsErrorPP: pp, TolerancePP: tolPP,
			Within: pp <= tolPP+1e-9, Source: h.ObservedKV.Source,
		}, ""
	case haveReal:
		return nil, "hit rate: the trace header has observed_kv_metrics but the sim metrics have no cache_hit_rate; verdict omitted"
	case haveSim:
		return nil, "hit rate: the sim metrics have cache_hit_rate but the trace header has no observed_kv_metrics; verdict omitted"
	}
	return nil, ""
}

// knownLimitations is the fixed list of docs/calibrate.md §10, in our own words.
func knownLimitations() []string {
	return []string{
		"The simulator advances in discrete scheduler steps with modelled step times; a real server overlaps work and jitters, so tail latencies under heavy load carry the largest error.",
		"Simulated prompts use synthetic token ids that reproduce the prefix-sharing structure of the trace, not its content, so prefix-cache hits can differ from the server's.",
		"Speculative decoding is not modelled; against a server that uses it, per-token latencies and their spread will differ.",
		"Server prompt counts include the chat template, so token_mismatches on prefix-group rows of up to one KV block are expected and harmless.",
	}
}
