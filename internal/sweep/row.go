package sweep

// Row statuses.
const (
	// StatusOK: the case ran and reached a steady state; its latencies
	// stand for the deployment at that load.
	StatusOK = "ok"
	// StatusUnstable: the queue grew until the end of the run (see
	// steady.Check): the latencies depend on how long the run was, so none
	// is reported and the SLO is not met.
	StatusUnstable = "unstable"
	// StatusInfeasible: the case's deployment cannot be built (the model
	// does not fit, a P/D split that does not add up, ...); Reason says why.
	StatusInfeasible = "infeasible"
)

// Row roles: a case of the grid, or one evaluation of a max-rate search.
const (
	RoleGrid   = "grid"
	RoleProbe  = "probe"  // far beyond capacity, to measure it
	RoleSearch = "search" // bracketing and narrowing the max rate
	RoleCurve  = "curve"  // below the max rate, to draw the latency curve
)

// Latency is one latency's statistics over a run, in ms.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
}

// Stat returns the named statistic (mean, p50, p90, p95, p99).
func (l *Latency) Stat(name string) (float64, bool) {
	if l == nil {
		return 0, false
	}
	switch name {
	case "mean":
		return l.Mean, true
	case "p50":
		return l.P50, true
	case "p90":
		return l.P90, true
	case "p95":
		return l.P95, true
	case "p99":
		return l.P99, true
	}
	return 0, false
}

// Row is what one case yields: the simulated (or measured) run of one
// deployment at one load. Latencies are nil when the run did not reach a
// steady state. Costs are nil when the GPU has no price.
type Row struct {
	Case    int     `json:"case"`
	Role    string  `json:"role"`
	Params  []Param `json:"params"`
	RateRPS float64 `json:"rate_rps"` // offered load, requests/s; 0 for a closed-loop workload
	Status  string  `json:"status"`
	Reason  string  `json:"reason,omitempty"`

	Injected  int64 `json:"injected_requests"`
	Completed int64 `json:"completed_requests"`
	// Failed are the requests that did not complete: timed out, dropped,
	// rejected, or unfinished when the run stopped.
	Failed int64 `json:"failed_requests"`
	// Rejected are the failed requests the gateway let go: refused at
	// admission, shed from or expired in its queue, evicted from an
	// instance.
	Rejected int64 `json:"rejected_requests,omitempty"`
	// QueueGrowth is the steady-state test's measure (steady.Check).
	QueueGrowth float64 `json:"queue_growth"`
	DurationS   float64 `json:"duration_s"`

	ThroughputRPS float64 `json:"throughput_rps"`
	TokensPerSec  float64 `json:"output_tokens_per_s"`
	// GoodputRPS counts the requests that meet the SLO's per-request
	// bounds (SLO.RequestTargets) per second; SLOAttainment is their share
	// of the injected requests. Without an SLO every completed request
	// counts.
	GoodputRPS    float64 `json:"goodput_rps"`
	SLOAttainment float64 `json:"slo_attainment"`

	TTFT *Latency `json:"ttft_ms,omitempty"`
	TPOT *Latency `json:"tpot_ms,omitempty"`
	ITL  *Latency `json:"itl_ms,omitempty"`
	E2E  *Latency `json:"e2e_ms,omitempty"`

	KVUtilizationMean float64 `json:"kv_utilization_mean"`
	KVUtilizationPeak float64 `json:"kv_utilization_peak"`
	Preemptions       int64   `json:"preemptions"`

	GPU  string `json:"gpu"`
	GPUs int    `json:"gpus"` // instances × tensor parallel × pipeline stages × data parallel
	// GPUMix, for a deployment whose pools run on different GPU types, is
	// the count of each type (GPU then names them all, "H100+A100-80");
	// the cost is the sum over the types.
	GPUMix      []GPUCount `json:"gpu_mix,omitempty"`
	CostPerHour *float64   `json:"cost_per_hour_usd,omitempty"`
	// CostPerMTok is the cost of a million output tokens at the run's
	// throughput: what the deployment costs per token at this load.
	CostPerMTok *float64 `json:"cost_per_million_output_tokens_usd,omitempty"`

	// Fleet is the run's fleet in total when its replicas come and go (a
	// fleet file, docs/fleet.md); the row's costs are then the fleet's
	// dollars over the run, at the fleet file's node prices.
	Fleet *FleetRow `json:"fleet,omitempty"`

	// PerClass holds, for a workload with named SLO classes (tiers), each
	// class's latencies and the requests the gateway let go, for the SLO's
	// class bounds (critical:ttft.p99<500ms); absent without named classes.
	PerClass map[string]ClassRow `json:"per_class,omitempty"`

	SLOMet      *bool    `json:"slo_met,omitempty"` // nil without an SLO
	SLOFailures []string `json:"slo_failures,omitempty"`

	// Band is the interval of the latencies when the sweep asks for one
	// (Interval; computed from Doc.IntervalRows by Doc.Finish).
	Band *Band `json:"interval,omitempty"`
	// Variant is, for a row of Doc.IntervalRows, the run of the interval
	// it is; nil for a case's own run.
	Variant *Variant `json:"variant,omitempty"`
}

// FleetRow is a fleet over a run: whether an autoscaler sized it (else it
// kept the replicas it started with), the GPU-hours and dollars of its
// nodes, the dollars per million input and output tokens completed, and
// its ready replicas at most and its scaling decisions.
type FleetRow struct {
	Autoscaled     bool     `json:"autoscaled"`
	GPUHours       float64  `json:"gpu_hours"`
	ReplicaHours   float64  `json:"replica_hours"`
	Dollars        float64  `json:"dollars"`
	DollarsPerMTok *float64 `json:"dollars_per_million_tokens"`
	PeakReplicas   int      `json:"peak_replicas"`
	ScaleUps       int      `json:"scale_ups"`
	ScaleDowns     int      `json:"scale_downs"`
}

// ClassRow is one SLO class (tier) of a row: the statistics the
// simulator keeps per class, ms, and the class's requests the gateway let
// go (refused, shed, expired, evicted).
type ClassRow struct {
	Count     int64   `json:"count"`
	Completed int64   `json:"completed_requests"`
	TTFTP99   float64 `json:"ttft_p99_ms"`
	ITLMean   float64 `json:"itl_mean_ms"`
	E2EP99    float64 `json:"e2e_p99_ms"`
	LetGo     int64   `json:"let_go_requests,omitempty"`
}

// classStats are the metric.stat pairs a class bound may name: those the
// simulator keeps per class.
var classStats = []string{"ttft.p99", "itl.mean", "e2e.p99"}

// ClassLatency returns a class's latency statistic in ms (ok false when
// the row has no such class, or the class finished no request).
func (r *Row) ClassLatency(class, metric, stat string) (float64, bool) {
	c, ok := r.PerClass[class]
	if !ok || c.Completed == 0 {
		return 0, false
	}
	switch metric + "." + stat {
	case "ttft.p99":
		return c.TTFTP99, true
	case "itl.mean":
		return c.ITLMean, true
	case "e2e.p99":
		return c.E2EP99, true
	}
	return 0, false
}

// Latency returns a latency statistic in ms (ok false when absent).
func (r *Row) Latency(metric, stat string) (float64, bool) {
	switch metric {
	case "ttft":
		return r.TTFT.Stat(stat)
	case "tpot":
		return r.TPOT.Stat(stat)
	case "itl":
		return r.ITL.Stat(stat)
	case "e2e":
		return r.E2E.Stat(stat)
	}
	return 0, false
}

// Met reports whether the row meets the SLO (false without one).
func (r *Row) Met() bool { return r.SLOMet != nil && *r.SLOMet }

// Param returns the value of a swept key in the row ("" when not swept).
func (r *Row) Param(key string) string {
	for _, p := range r.Params {
		if p.Key == key {
			return p.Value
		}
	}
	return ""
}

// GPUCount is a number of GPUs of one type.
type GPUCount struct {
	GPU  string `json:"gpu"`
	GPUs int    `json:"gpus"`
}

// hourly is the row's GPUs' cost per hour; false when a GPU has no price.
func (r *Row) hourly(prices Prices) (float64, bool) {
	if len(r.GPUMix) == 0 {
		p, ok := prices.Lookup(r.GPU)
		return float64(r.GPUs) * p.USDPerHour, ok
	}
	var c float64
	for _, g := range r.GPUMix {
		p, ok := prices.Lookup(g.GPU)
		if !ok {
			return 0, false
		}
		c += float64(g.GPUs) * p.USDPerHour
	}
	return c, true
}

// finish completes a row the runner made: the SLO verdict and the costs.
func (r *Row) finish(slo SLO, prices Prices) {
	r.SLOMet, r.SLOFailures = nil, nil
	if !slo.Empty() {
		met, why := slo.Check(r)
		r.SLOMet = &met
		if !met {
			r.SLOFailures = why
		}
	}
	r.CostPerHour, r.CostPerMTok = nil, nil
	if r.Status == StatusInfeasible || r.GPUs <= 0 {
		return
	}
	c, ok := r.hourly(prices)
	if r.Fleet != nil {
		// The fleet's nodes over the run, at its own prices, not the
		// GPUs it started with at list price.
		c, ok = r.Fleet.Dollars*3600/r.DurationS, r.DurationS > 0
	}
	if ok {
		// Prices are bounded (checkPrice), but a cost that still is not a
		// finite number (a vanishing throughput) is left out, as JSON
		// cannot hold it.
		if !finite(c) {
			return
		}
		r.CostPerHour = &c
		if m := c / (r.TokensPerSec * 3600 / 1e6); r.TokensPerSec > 0 && finite(m) {
			r.CostPerMTok = &m
		}
	}
}
