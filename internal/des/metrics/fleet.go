package metrics

import (
	"slices"

	"servesim/internal/des/instance"
	"servesim/internal/quantile"
)

// FleetSummary is a changing fleet over the run and in total
// (docs/fleet.md): what it held, what it cost, and what the requests saw,
// bucket by bucket.
type FleetSummary struct {
	BucketS      float64 `json:"bucket_s"`
	ReplicaHours float64 `json:"replica_hours"` // of ready replicas
	GPUHours     float64 `json:"gpu_hours"`     // of provisioned nodes
	Dollars      float64 `json:"dollars"`
	// DollarsPerMillionTokens is over the input and output tokens of the
	// completed requests; null when none completed.
	DollarsPerMillionTokens *float64 `json:"dollars_per_million_tokens"`
	PeakReplicas            int      `json:"peak_replicas"`
	ScaleUps                int      `json:"scale_ups"`
	ScaleDowns              int      `json:"scale_downs"`
	ScaleUpsWithoutRoom     int      `json:"scale_ups_without_room"`
	// DrainCut are the requests an immediate drain stopped and routed
	// again; DrainCutRejected those of them no replica was left to take.
	DrainCut         int64         `json:"drain_cut,omitempty"`
	DrainCutRejected int64         `json:"drain_cut_rejected,omitempty"`
	OverTime         []FleetBucket `json:"over_time"`
}

// FleetBucket is one time bucket: time averages of the ready, loading and
// draining replicas and of the provisioned GPUs, the dollars spent, and
// the requests that arrived in it.
type FleetBucket struct {
	StartS    float64 `json:"start_s"`
	Replicas  float64 `json:"replicas"`
	Loading   float64 `json:"loading"`
	Draining  float64 `json:"draining"`
	GPUs      float64 `json:"gpus"`
	Dollars   float64 `json:"dollars"`
	Arrivals  int64   `json:"arrivals"`
	Completed int64   `json:"completed"`
	// SLOAttainment is good / arrivals (null without an SLO or arrivals).
	SLOAttainment *float64 `json:"slo_attainment"`
	TTFTP99Ms     float64  `json:"ttft_p99_ms"` // of the completed requests
}

// MaxFleetBuckets bounds the buckets of a fleet report; later times fall
// in the last one.
const MaxFleetBuckets = 1 << 20

// FleetRequests gathers a run's requests by the bucket of their arrival.
type FleetRequests struct {
	widthUs int64
	agg     *Aggregator
	b       []fleetReqs
	tokens  int64 // input + output of the completed requests
}

type fleetReqs struct {
	arrivals, completed, good int64
	ttftMs                    []float64
}

// NewFleetRequests buckets requests by widthUs (> 0), judging them by
// agg's SLO targets.
func NewFleetRequests(widthUs int64, agg *Aggregator) *FleetRequests {
	return &FleetRequests{widthUs: widthUs, agg: agg}
}

// Add counts one request's result.
func (f *FleetRequests) Add(res *instance.Result) {
	k := int(min(max(res.ArrivalUs, 0)/f.widthUs, MaxFleetBuckets-1))
	for len(f.b) <= k {
		f.b = append(f.b, fleetReqs{})
	}
	x := &f.b[k]
	x.arrivals++
	if res.Status != instance.StatusCompleted || res.InTransfer {
		return
	}
	x.completed++
	f.tokens += int64(res.PromptTokens + res.OutputTokens)
	x.ttftMs = append(x.ttftMs, float64(res.TTFTUs)/1e3)
	if f.agg.isGood(res, res.TPOTUs()) {
		x.good++
	}
}

// Fill writes the request figures into s's buckets (adding buckets the
// fleet report lacks) and the dollars per million tokens.
func (f *FleetRequests) Fill(s *FleetSummary) {
	for len(s.OverTime) < len(f.b) {
		s.OverTime = append(s.OverTime, FleetBucket{StartS: float64(len(s.OverTime)) * float64(f.widthUs) / 1e6})
	}
	judged := len(f.agg.targets) > 0
	for i, x := range f.b {
		o := &s.OverTime[i]
		o.Arrivals, o.Completed = x.arrivals, x.completed
		if judged && x.arrivals > 0 {
			a := float64(x.good) / float64(x.arrivals)
			o.SLOAttainment = &a
		}
		if len(x.ttftMs) > 0 {
			slices.Sort(x.ttftMs)
			o.TTFTP99Ms = quantile.Sorted(x.ttftMs, 99)
		}
	}
	if f.tokens > 0 {
		d := s.Dollars / (float64(f.tokens) / 1e6)
		s.DollarsPerMillionTokens = &d
	}
}
