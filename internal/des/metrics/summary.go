package metrics

import (
	"math"
	"sort"

	"servesim/internal/quantile"
)

// ClassSummary is the per-SLO-class block of the summary.
type ClassSummary struct {
	Count         int64    `json:"count"` // injected requests of the class
	Completed     int64    `json:"completed_requests"`
	SLOAttainment *float64 `json:"slo_attainment"` // good / injected; null when the class has no SLO target
	GoodputRPS    *float64 `json:"goodput_rps"`    // null when the class has no SLO target
	TTFTP99Ms     float64  `json:"ttft_p99_ms"`
	ITLMeanMs     float64  `json:"itl_mean_ms"`
	E2EP99Ms      float64  `json:"e2e_p99_ms"`
	GatewayCounts
}

// GatewayCounts are the requests of a class or tenant that the cluster
// refused or its gateway let go; absent when zero.
type GatewayCounts struct {
	Rejected int64 `json:"rejected_requests,omitempty"`
	Shed     int64 `json:"gateway_queue_shed,omitempty"`
	Expired  int64 `json:"gateway_expired,omitempty"`
	Evicted  int64 `json:"gateway_evicted,omitempty"`
}

func (g gatewayAcc) counts() GatewayCounts {
	return GatewayCounts{Rejected: g.rejected, Shed: g.shed, Expired: g.expired, Evicted: g.evicted}
}

// TenantSummary is the per-tenant block of the summary.
type TenantSummary struct {
	Completed    int64 `json:"completed_requests"`
	OutputTokens int64 `json:"output_tokens"`
	// Injected, SLOAttainment and GoodputRPS are given when some class has
	// an SLO target (SLOGiven).
	Injected      int64    `json:"count,omitempty"`
	SLOAttainment *float64 `json:"slo_attainment,omitempty"`
	GoodputRPS    *float64 `json:"goodput_rps,omitempty"`
	GatewayCounts
}

// Summary is the summary JSON of docs/simulator.md §14: BLIS's keys first, then
// ours. Latencies are in ms.
type Summary struct {
	CompletedRequests      int64   `json:"completed_requests"`
	StillQueued            int64   `json:"still_queued"`
	StillRunning           int64   `json:"still_running"`
	InjectedRequests       int64   `json:"injected_requests"`
	TotalInputTokens       int64   `json:"total_input_tokens"`
	TotalOutputTokens      int64   `json:"total_output_tokens"`
	VLLMEstimatedDurationS float64 `json:"vllm_estimated_duration_s"`
	ResponsesPerSec        float64 `json:"responses_per_sec"`
	TokensPerSec           float64 `json:"tokens_per_sec"`

	TTFTMeanMs float64 `json:"ttft_mean_ms"`
	TTFTP90Ms  float64 `json:"ttft_p90_ms"`
	TTFTP95Ms  float64 `json:"ttft_p95_ms"`
	TTFTP99Ms  float64 `json:"ttft_p99_ms"`
	E2EMeanMs  float64 `json:"e2e_mean_ms"`
	E2EP90Ms   float64 `json:"e2e_p90_ms"`
	E2EP95Ms   float64 `json:"e2e_p95_ms"`
	E2EP99Ms   float64 `json:"e2e_p99_ms"`
	ITLMeanMs  float64 `json:"itl_mean_ms"`
	ITLP90Ms   float64 `json:"itl_p90_ms"`
	ITLP95Ms   float64 `json:"itl_p95_ms"`
	ITLP99Ms   float64 `json:"itl_p99_ms"`

	SchedulingDelayP99Ms float64 `json:"scheduling_delay_p99_ms"`
	PreemptionCount      int64   `json:"preemption_count"`
	DroppedUnservable    int64   `json:"dropped_unservable"`
	LengthCappedRequests int64   `json:"length_capped_requests"`
	TimedOutRequests     int64   `json:"timed_out_requests"`
	// GoodputRPS and SLOAttainment are null without an SLO (SLOGiven
	// false): with no bound every completed request would count as good,
	// and 100% would say nothing.
	GoodputRPS    *float64                `json:"goodput_rps"`
	SLOAttainment *float64                `json:"slo_attainment"`
	PerClass      map[string]ClassSummary `json:"per_class"`

	RejectedRequests  int64   `json:"rejected_requests"`
	TPOTMeanMs        float64 `json:"tpot_mean_ms"`
	TPOTP90Ms         float64 `json:"tpot_p90_ms"`
	TPOTP95Ms         float64 `json:"tpot_p95_ms"`
	TPOTP99Ms         float64 `json:"tpot_p99_ms"`
	TTFTP50Ms         float64 `json:"ttft_p50_ms"`
	E2EP50Ms          float64 `json:"e2e_p50_ms"`
	ITLP50Ms          float64 `json:"itl_p50_ms"`
	TPOTP50Ms         float64 `json:"tpot_p50_ms"`
	KVUtilizationMean float64 `json:"kv_utilization_mean"`
	KVUtilizationPeak float64 `json:"kv_utilization_peak"`
	CacheHitRate      float64 `json:"cache_hit_rate"`
	KVAllocFailures   int64   `json:"kv_allocation_failures"`
	// The CPU KV tier (absent when it moved nothing): blocks offloaded to
	// it and reloaded from it, reloads within 1 ms of their offload
	// (thrashing), and the reload time added to steps.
	KVOffloadedBlocks int64   `json:"kv_offloaded_blocks,omitempty"`
	KVReloadedBlocks  int64   `json:"kv_reloaded_blocks,omitempty"`
	KVThrashing       int64   `json:"kv_thrashing,omitempty"`
	KVReloadMs        float64 `json:"kv_reload_ms,omitempty"`

	PerTenant         map[string]TenantSummary `json:"per_tenant"`
	JainFairnessIndex float64                  `json:"jain_fairness_index"`

	// SLOGiven: some class had a goodput target (--slo, or the workload
	// spec's or the trace header's goodput_slo_targets).
	SLOGiven bool `json:"slo_given"`
	// SteadyState and QueueGrowth are the steady-state test's outcome
	// (steady.Check); Unstable words it when the run has none.
	SteadyState bool    `json:"steady_state"`
	QueueGrowth float64 `json:"queue_growth"`
	Unstable    string  `json:"unstable,omitempty"`

	// Cluster runs only (absent for a single instance without cluster
	// policies).
	InTransferRequests int64 `json:"in_transfer_requests,omitempty"` // P/D: between prefill and decode at the end
	// DroppedNoDecodeKV counts the P/D requests dropped because their decode
	// instance had no free KV blocks for the prompt when the prefill ended
	// (docs/simulator.md §12): a transient shortage, apart from dropped_unservable.
	DroppedNoDecodeKV int64 `json:"dropped_no_decode_kv,omitempty"`
	// EncodeRoutingRejections counts the multimodal requests no encode
	// instance could take (their media exceed an encode pass).
	EncodeRoutingRejections int64 `json:"encode_routing_rejections,omitempty"`
	// The gateway's buckets (docs/simulator.md §10.1): requests
	// still in its queue at the end, shed from it to make room, expired
	// there, evicted from an instance.
	GatewayQueueDepth   int64             `json:"gateway_queue_depth,omitempty"`
	GatewayQueueShed    int64             `json:"gateway_queue_shed,omitempty"`
	GatewayExpired      int64             `json:"gateway_expired,omitempty"`
	GatewayEvicted      int64             `json:"gateway_evicted,omitempty"`
	RoutingDistribution []int64           `json:"routing_distribution,omitempty"` // requests routed per instance
	InstanceJainIndex   float64           `json:"instance_jain_index,omitempty"`  // Jain over the output tokens of the instances that decode (with P/D, the decode pool)
	PerInstance         []InstanceSummary `json:"per_instance,omitempty"`
	// RoutingRegret: the counterfactual regret of the routing decisions
	// (--counterfactual-k), one entry per pool that routed; absent without.
	RoutingRegret []RegretSummary `json:"routing_regret,omitempty"`
	// Fitness: the --fitness-weights score and the metrics it compresses;
	// absent without.
	Fitness *Fitness `json:"fitness,omitempty"`
	// Fleet is the fleet over time and its cost, when replicas come and go.
	Fleet *FleetSummary `json:"fleet,omitempty"`

	// Deployment names what was simulated (model, GPU, parallelism) for the
	// text summary; the JSON keeps BLIS's keys and leaves it out.
	Deployment string `json:"-"`
}

// InstanceSummary is one instance's block of a cluster summary.
type InstanceSummary struct {
	Instance          int     `json:"instance"`
	Pool              string  `json:"pool,omitempty"`
	Routed            int64   `json:"routed_requests"`
	Completed         int64   `json:"completed_requests"`
	Dropped           int64   `json:"dropped_unservable"`
	TimedOut          int64   `json:"timed_out_requests"`
	Evicted           int64   `json:"gateway_evicted,omitempty"`
	OutputTokens      int64   `json:"output_tokens"`
	TTFTMeanMs        float64 `json:"ttft_mean_ms"`
	E2EMeanMs         float64 `json:"e2e_mean_ms"`
	Steps             int64   `json:"steps"`
	BusyFraction      float64 `json:"busy_fraction"` // Σ step time / duration
	PreemptionCount   int64   `json:"preemption_count"`
	KVUtilizationMean float64 `json:"kv_utilization_mean"`
	KVUtilizationPeak float64 `json:"kv_utilization_peak"`
	CacheHitRate      float64 `json:"cache_hit_rate"`
}

const usPerMs = 1e3

// Summary computes the summary. It may be called more than once.
func (a *Aggregator) Summary(info RunInfo) Summary {
	dur := float64(info.DurationUs) / 1e6
	per := func(x float64) float64 {
		if dur <= 0 {
			return 0
		}
		return x / dur
	}
	s := Summary{
		CompletedRequests: a.completed, StillQueued: a.stillQueued, StillRunning: a.stillRunning,
		InjectedRequests: a.injected, TotalInputTokens: a.inTok, TotalOutputTokens: a.outTok,
		VLLMEstimatedDurationS: dur, ResponsesPerSec: per(float64(a.completed)), TokensPerSec: per(float64(a.outTok)),
		PreemptionCount: info.Preemptions, DroppedUnservable: a.dropped, LengthCappedRequests: a.lengthCapped,
		TimedOutRequests: a.timedOut, RejectedRequests: a.rejected,
		KVUtilizationPeak: info.KVPeak, KVAllocFailures: info.AllocFailures,
		KVOffloadedBlocks: info.CPUOffloads, KVReloadedBlocks: info.CPUReloads, KVThrashing: info.CPUThrashing,
		KVReloadMs: float64(info.CPUReloadUs) / usPerMs,
		PerClass:   map[string]ClassSummary{}, PerTenant: map[string]TenantSummary{},
	}
	if len(a.targets) > 0 {
		s.SLOGiven = true
		s.GoodputRPS, s.SLOAttainment = ratios(per(float64(a.good)), a.good, a.injected)
	}
	v := a.steadiness.Verdict()
	s.SteadyState, s.QueueGrowth, s.Unstable = v.Steady, v.Growth, v.Reason()
	// The columns are sorted in place (they are multisets), one after the
	// other, so that no copy of them is made.
	a.ttft.sort()
	s.TTFTMeanMs = a.ttft.mean() / usPerMs
	s.TTFTP50Ms, s.TTFTP90Ms, s.TTFTP95Ms, s.TTFTP99Ms = pcts(&a.ttft)
	a.e2e.sort()
	s.E2EMeanMs = a.e2e.mean() / usPerMs
	s.E2EP50Ms, s.E2EP90Ms, s.E2EP95Ms, s.E2EP99Ms = pcts(&a.e2e)
	a.sched.sort()
	s.SchedulingDelayP99Ms = a.sched.percentile(99) / usPerMs
	tpot := a.tpot
	sort.Float64s(tpot)
	var ts float64
	for _, v := range tpot {
		ts += v
	}
	if len(tpot) > 0 {
		s.TPOTMeanMs = ts / float64(len(tpot)) / usPerMs
	}
	s.TPOTP50Ms = quantile.Sorted(tpot, 50) / usPerMs
	s.TPOTP90Ms = quantile.Sorted(tpot, 90) / usPerMs
	s.TPOTP95Ms = quantile.Sorted(tpot, 95) / usPerMs
	s.TPOTP99Ms = quantile.Sorted(tpot, 99) / usPerMs
	s.ITLMeanMs = HistMean(info.ITL) / usPerMs
	s.ITLP50Ms = HistPercentile(info.ITL, 50) / usPerMs
	s.ITLP90Ms = HistPercentile(info.ITL, 90) / usPerMs
	s.ITLP95Ms = HistPercentile(info.ITL, 95) / usPerMs
	s.ITLP99Ms = HistPercentile(info.ITL, 99) / usPerMs
	if info.KVCapacityBlockUs > 0 {
		s.KVUtilizationMean = float64(info.KVUsedBlockUs) / float64(info.KVCapacityBlockUs)
	}
	if d := info.CacheHits + info.CacheMisses; d > 0 {
		s.CacheHitRate = float64(info.CacheHits) / float64(d)
	}
	for name, c := range a.classes {
		cs := ClassSummary{Count: c.injected, Completed: c.completed, TTFTP99Ms: s.TTFTP99Ms, E2EP99Ms: s.E2EP99Ms,
			GatewayCounts: c.gw.counts()}
		if _, ok := a.target(name); ok {
			cs.GoodputRPS, cs.SLOAttainment = ratios(per(float64(c.good)), c.good, c.injected)
		}
		if a.split {
			c.ttft.sort()
			c.e2e.sort()
			cs.TTFTP99Ms, cs.E2EP99Ms = c.ttft.percentile(99)/usPerMs, c.e2e.percentile(99)/usPerMs
		}
		if c.itlCount > 0 {
			cs.ITLMeanMs = float64(c.itlSum) / float64(c.itlCount) / usPerMs
		}
		s.PerClass[name] = cs
	}
	names := make([]string, 0, len(a.tenants))
	for name := range a.tenants {
		names = append(names, name)
	}
	sort.Strings(names)
	xs := make([]float64, 0, len(names))
	for _, name := range names {
		t := a.tenants[name]
		ts := TenantSummary{Completed: t.completed, OutputTokens: t.outTok, GatewayCounts: t.gw.counts()}
		if s.SLOGiven {
			ts.Injected = t.injected
			ts.GoodputRPS, ts.SLOAttainment = ratios(per(float64(t.good)), t.good, t.injected)
		}
		s.PerTenant[name] = ts
		xs = append(xs, float64(t.outTok))
	}
	s.JainFairnessIndex = Jain(xs)
	s.InTransferRequests = a.inTransfer
	s.DroppedNoDecodeKV = a.noDecodeKV
	s.EncodeRoutingRejections = a.encodeRejected
	s.GatewayQueueDepth, s.GatewayQueueShed, s.GatewayExpired, s.GatewayEvicted = a.gatewayQueued, a.shed, a.expired, a.evicted
	if len(info.PerInstance) > 0 {
		a.perInstance(&s, info)
	}
	s.RoutingRegret = info.Regret
	return s
}

// perInstance fills the cluster blocks of the summary.
func (a *Aggregator) perInstance(s *Summary, info RunInfo) {
	toks := make([]float64, 0, len(info.PerInstance))
	for i, ii := range info.PerInstance {
		var acc instAcc
		if i < len(a.perInst) {
			acc = a.perInst[i]
		}
		is := InstanceSummary{Instance: i, Pool: ii.Pool, Routed: ii.Routed, Completed: acc.completed,
			Dropped: acc.dropped, TimedOut: acc.timedOut, Evicted: acc.evicted, OutputTokens: acc.outTok, Steps: ii.Steps,
			PreemptionCount: ii.Preemptions, KVUtilizationPeak: ii.KVPeak}
		if acc.completed > 0 {
			is.TTFTMeanMs = float64(acc.ttftSum) / float64(acc.completed) / usPerMs
			is.E2EMeanMs = float64(acc.e2eSum) / float64(acc.completed) / usPerMs
		}
		if info.DurationUs > 0 {
			is.BusyFraction = float64(ii.BusyUs) / float64(info.DurationUs)
		}
		if ii.KVCapacityBlockUs > 0 {
			is.KVUtilizationMean = float64(ii.KVUsedBlockUs) / float64(ii.KVCapacityBlockUs)
		}
		if d := ii.CacheHits + ii.CacheMisses; d > 0 {
			is.CacheHitRate = float64(ii.CacheHits) / float64(d)
		}
		s.PerInstance = append(s.PerInstance, is)
		s.RoutingDistribution = append(s.RoutingDistribution, ii.Routed)
		if ii.Pool != "prefill" { // a prefill instance hands its requests on: its few tokens are no share of the decoding
			toks = append(toks, float64(acc.outTok))
		}
	}
	s.InstanceJainIndex = Jain(toks)
}

// ratios are goodput and attainment (good / injected, 0 when none was).
func ratios(goodput float64, good, injected int64) (*float64, *float64) {
	att := 0.0
	if injected > 0 {
		att = float64(good) / float64(injected)
	}
	return &goodput, &att
}

func pcts(sorted *column) (p50, p90, p95, p99 float64) {
	return sorted.percentile(50) / usPerMs, sorted.percentile(90) / usPerMs,
		sorted.percentile(95) / usPerMs, sorted.percentile(99) / usPerMs
}

// Jain is (Σx)² / (n·Σx²), 1 when every x is 0 or there are none.
func Jain(xs []float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	if s2 == 0 || len(xs) == 0 || math.IsNaN(s2) {
		return 1
	}
	return s * s / (float64(len(xs)) * s2)
}
