package report

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"

	"servesim/internal/tracev2"
)

// TraceInfo counts the buckets of docs/calibrate.md §2 (BLIS keys first).
type TraceInfo struct {
	NumRequests     int    `json:"num_requests"`
	WarmUpExcluded  int    `json:"warm_up_excluded"`
	MatchedPairs    int    `json:"matched_pairs"`
	TokenMismatches int    `json:"token_mismatches"`
	ITLDropped      int    `json:"itl_dropped,omitempty"`
	Duration        string `json:"duration"`
	ExcludedNonOK   int    `json:"excluded_non_ok"`
	InvalidTiming   int    `json:"invalid_timing"`
	UnmatchedReal   int    `json:"unmatched_real"`
	UnmatchedSim    int    `json:"unmatched_sim"`
}

// Report is the whole calibration (docs/calibrate.md §10). Field order is the JSON
// order; maps marshal in sorted key order, so the JSON is deterministic.
type Report struct {
	TraceInfo        TraceInfo                         `json:"trace_info"`
	Metrics          map[string]*Comparison            `json:"metrics"`
	NotMeasured      map[string]string                 `json:"not_measured,omitempty"` // ours: metric -> why the real side has none (a non-streamed capture's tpot, itl)
	ConfigMatch      ConfigMatch                       `json:"config_match"`
	KnownLimitations []string                          `json:"known_limitations"`
	Goodput          *Goodput                          `json:"goodput,omitempty"`
	HitRate          *HitRate                          `json:"hit_rate,omitempty"`
	TTFTTolerance    *TTFTTolerance                    `json:"ttft_tolerance,omitempty"`
	BySLOClass       map[string]map[string]*Comparison `json:"by_slo_class"`
	ByModel          map[string]map[string]*Comparison `json:"by_model"`
	Validity         Validity                          `json:"validity"`
	Phases           *Phases                           `json:"phases,omitempty"` // ours: the ramp and the steady state graded apart (docs/calibrate.md §15)
	Gate             *GateResult                       `json:"gate,omitempty"`
	// Coverage is the share of real values inside the simulated 90%
	// intervals, when the interval's runs were given (Input.SimLo, SimHi).
	Coverage *Coverage `json:"interval_coverage,omitempty"`
	// Tiers is the per-class and per-tenant view, when the trace names
	// classes or tenants.
	Tiers *Tiers `json:"tiers,omitempty"`

	// Run describes the run and the resolved settings, for the human outputs.
	Run RunInfo `json:"-"`
	// Warnings are for stderr (too few pairs, one-sided hit rate, config
	// mismatches, unknown statuses); the caller decides where they go.
	Warnings []string `json:"-"`

	pairs map[string]*pairs // per-metric values, for the plots
	// arrivals holds the arrival of each ttft and e2e pair, in their order.
	arrivals []int64
	absent   map[string]string // metric -> why it could not be computed
}

// RunInfo is the trace header summary and the settings calibration resolved.
type RunInfo struct {
	Mode             string
	Model            string
	WorkloadSeed     *int64
	WorkloadSpec     string
	NetworkRTTUs     int64
	BandwidthMbps    float64
	WarmupRequests   int64
	WarmupDurationUs int64
	TTFTFrom         string
}

// Build runs the calibration of docs/calibrate.md §2–§9 over in. Gates are applied
// separately (ApplyGates), so outputs can show their result. Bad input or
// settings give an *InputError (exit code 2).
func Build(in Input, cfg Config) (*Report, error) {
	s, err := cfg.resolve(in.Header)
	if err != nil {
		return nil, err
	}
	m, err := match(&in, &s)
	if err != nil {
		return nil, err
	}
	if err := belonging(&in, m); err != nil {
		return nil, err
	}
	if m.matched == 0 {
		return nil, inputErrorf("report: no trace row matched a simulated result (%d rows: %d warm-up, %d non-ok, %d unmatched, %d invalid timing; %d sim results): check that trace and results number requests the same way (request_id) and the warm-up setting",
			m.numRequests, m.warmUp, m.nonOK, m.unmatchedReal, m.invalidTiming, len(in.Sim))
	}
	rt := runtimeUs(m)
	r := &Report{
		TraceInfo: TraceInfo{
			NumRequests: m.numRequests, WarmUpExcluded: m.warmUp, MatchedPairs: m.matched,
			TokenMismatches: m.tokenMismatches, ITLDropped: m.itlDropped, Duration: durationString(rt),
			ExcludedNonOK: m.nonOK, InvalidTiming: m.invalidTiming, UnmatchedReal: m.unmatchedReal,
			UnmatchedSim: m.unmatchedSim,
		},
		KnownLimitations: knownLimitations(),
		pairs:            make(map[string]*pairs),
		arrivals:         m.arrivals,
		absent:           make(map[string]string),
		Run: RunInfo{
			Mode: in.Header.Mode, Model: in.Header.Server.Model, WorkloadSeed: in.Header.WorkloadSeed,
			WorkloadSpec: in.Header.WorkloadSpec, NetworkRTTUs: s.rttUs, BandwidthMbps: s.bandwidthMbps,
			WarmupRequests: s.warmupN, WarmupDurationUs: s.warmupDurUs, TTFTFrom: TTFTFromFirstChunk,
		},
	}
	if s.firstToken {
		r.Run.TTFTFrom = TTFTFromFirstToken
	}
	if m.belongingWarning != "" {
		r.warnf("%s", m.belongingWarning)
	}
	if m.nonFiniteSim > 0 {
		r.warnf("sim: %d matched results have a NaN or infinite latency and are left out of every metric", m.nonFiniteSim)
	}
	for i, st := range m.unknownStatus {
		if i == maxStatusWarnings {
			r.warnf("trace: %d more unknown statuses treated as not ok", len(m.unknownStatus)-i)
			break
		}
		r.warnf("trace: unknown status %s treated as not ok", tracev2.QuoteName(st))
	}
	for _, name := range metricNames() {
		p, ok := m.metrics[name]
		switch {
		case !ok:
			r.absent[name] = "no ITL data was given"
			continue
		case p.len() == 0 && m.nonStreamed == m.matched && (name == MetricITL || name == MetricTPOT):
			r.absent[name] = notMeasured + "no matched request was streamed, and a response sent whole has no per-token timing"
			if r.NotMeasured == nil {
				r.NotMeasured = map[string]string{}
			}
			r.NotMeasured[name] = strings.TrimPrefix(r.absent[name], notMeasured)
			continue
		case p.len() == 0 && name == MetricITL:
			r.absent[name] = "no matched request has 2 or more ITL chunks and 2 or more simulated output tokens"
			r.warnf("itl: the ITL data gave no usable pair; the itl metric is omitted")
			continue
		case p.len() == 0 && name == MetricTPOT:
			r.absent[name] = "no matched request has 2 or more output tokens"
			continue
		case p.len() == 0:
			return nil, inputErrorf("report: no valid %s pairs among %d matched requests: check the request_id numbering", name, m.matched)
		}
		r.pairs[name] = p
		if m.nonStreamed > 0 && name == MetricTPOT {
			r.warnf("tpot: %d of %d matched requests were not streamed and are left out (a response sent whole has no per-token timing)", m.nonStreamed, m.matched)
		}
		if p.len() < 3 {
			r.warnf("%s: only %d pairs; Pearson r needs 3 or more, so r is 0 and the grade is poor", name, p.len())
		}
	}
	r.Metrics, r.BySLOClass, r.ByModel = compareAll(r.pairs, m.byClass, m.byModel)
	r.TTFTTolerance = ttftTolerance(r.Metrics[MetricTTFT], s.ttftThreshold)
	r.Goodput = computeGoodput(m, &s, float64(rt)/1e6)
	r.Tiers = computeTiers(m, &s, float64(rt)/1e6, &in)
	hr, warn := hitRate(in.Header, in.SimMetrics, s.hitTolPP)
	r.HitRate = hr
	if warn != "" {
		r.Warnings = append(r.Warnings, warn)
	}
	var simDep map[string]any
	if in.SimMetrics != nil {
		simDep = in.SimMetrics.Deployment
	}
	cm, warns := configMatch(in.Header, simDep, in.SameModel)
	r.ConfigMatch = cm
	r.Warnings = append(r.Warnings, warns...)
	if in.SimLo != nil || in.SimHi != nil {
		if r.Coverage, err = coverage(&in, &s, m); err != nil {
			return nil, err
		}
	}
	r.Validity = computeValidity(&in, m, &s)
	r.Phases = computePhases(&in, m, &s, r.pairs)
	for _, c := range r.Validity.Checks {
		if c.Status == StatusFlagged {
			r.warnf("validity: %s: %s", c.Name, c.Detail)
		}
	}
	return r, nil
}

// maxStatusWarnings bounds the unknown statuses named one by one.
const maxStatusWarnings = 20

func (r *Report) warnf(format string, a ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, a...))
}

// compareAll computes every comparison: the metrics and the ttft and e2e
// breakdowns per class and model. The jobs are independent (each sorts only its
// own pairs), so they run on every core; the results do not depend on the order.
func compareAll(metrics map[string]*pairs, byClass, byModel map[string]map[string]*pairs) (
	map[string]*Comparison, map[string]map[string]*Comparison, map[string]map[string]*Comparison) {
	type job struct {
		p   *pairs
		out *Comparison
	}
	var jobs []job
	add := func(src map[string]*pairs) map[string]*Comparison {
		out := make(map[string]*Comparison, len(src))
		for name, p := range src {
			c := &Comparison{}
			out[name] = c
			jobs = append(jobs, job{p, c})
		}
		return out
	}
	nested := func(src map[string]map[string]*pairs) map[string]map[string]*Comparison {
		out := make(map[string]map[string]*Comparison, len(src))
		for key, ms := range src {
			out[key] = add(ms)
		}
		return out
	}
	top, classes, models := add(metrics), nested(byClass), nested(byModel)
	// Largest first, so the workers finish together.
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].p.len() > jobs[j].p.len() })
	work := make(chan job)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				*j.out = comparePairs(j.p)
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	return top, classes, models
}

// MetricNames lists the metrics present in the report, sorted.
func (r *Report) MetricNames() []string {
	names := make([]string, 0, len(r.Metrics))
	for n := range r.Metrics {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// WriteJSON writes the report JSON (two-space indent, sorted maps, trailing newline).
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("report: write json: %w", err)
	}
	return nil
}
