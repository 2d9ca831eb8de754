package fidelity

import (
	"context"
	"fmt"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/fit"
	"servesim/internal/report"
	"servesim/internal/tracev2"
)

// Interval is how often a run's real latencies fall inside the 90%
// interval of one of its replays: the replay and two more with every step
// time × 1 ∓ z·σ (deploy.IntervalScale, as replay --interval runs them),
// graded by calibrate's own rule (report.Coverage: a request is inside
// when its real value lies between the least and the greatest of its
// three simulated values, a percentile likewise).
type Interval struct {
	Sigma    float64
	Coverage *report.Coverage // TTFT and E2E over the run's requests
	// Regimes grade the requests of each load the real server met (see
	// Regime) on their own; a regime with no request is absent.
	Regimes map[Regime]*report.Coverage
}

// StepTimeSigma is the σ `calibrate fit` would record for this fit
// (fit.StepTimeSigma): the rule (√(π/2) × the larger of the E2E and TTFT
// MAPE) over the training runs' requests pooled, and over those of each
// load the replays met with enough requests, whichever is largest. The
// held-out run never informs its own σ: it is not among them. Without a
// compared request it is the physics model's documented default.
func (f *FitResult) StepTimeSigma() float64 {
	var all []map[Regime]RegimeErrors
	var loads []map[Regime]RegimeErrors
	for _, r := range f.PerRun {
		all = append(all, map[Regime]RegimeErrors{"": {N: r.N, TTFTMAPE: r.TTFTMAPE, E2EMAPE: r.E2EMAPE}})
		loads = append(loads, r.ByLoad)
	}
	return ruleSigma(pooledRegimes(all)[""], pooledRegimes(loads))
}

// ruleSigma is the σ calibrate fit's rule (fit.StepTimeSigma) gives the
// requests pooled in all, with loads their errors by load regime; the
// physics model's documented default for an empty pool.
func ruleSigma(all RegimeErrors, loads map[Regime]RegimeErrors) float64 {
	e := fitErrors(all)
	for g, l := range loads {
		if e.ByLoad == nil {
			e.ByLoad = map[Regime]fit.Errors{}
		}
		e.ByLoad[g] = fitErrors(l)
	}
	if s := fit.StepTimeSigma(&fit.Result{Fit: e}); s > 0 {
		return s
	}
	return latency.DefaultSigmaOf(latency.KindPhysics)
}

// fitErrors are a pool's MAPEs as calibrate fit holds them.
func fitErrors(p RegimeErrors) fit.Errors {
	return fit.Errors{N: p.N, TTFTMAPE: p.TTFTMAPE, E2EMAPE: p.E2EMAPE}
}

// interval replays c under cfg at both ends of the 90% interval of sigma
// and grades the real run against them and mid, the replay under cfg
// itself.
func (c *Case) interval(ctx context.Context, cfg deploy.Config, u Universal, mid *replayed, sigma float64) (*Interval, error) {
	lo, err := c.replayAt(ctx, cfg, u, deploy.IntervalScale(sigma, -1))
	if err != nil {
		return nil, err
	}
	hi, err := c.replayAt(ctx, cfg, u, deploy.IntervalScale(sigma, 1))
	if err != nil {
		return nil, err
	}
	return intervalOf(c.Run, sigma, mid.sims, lo.sims, hi.sims)
}

// intervalOf grades r against the interval [lo, hi] around mid: all its
// requests, then the requests of each load regime on their own (the
// trace's rows of the regime and their results, through the same
// report.Build).
func intervalOf(r *Run, sigma float64, mid, lo, hi []tracev2.SimResult) (*Interval, error) {
	cov, err := coverageOf(r, r.Records, mid, lo, hi)
	if err != nil {
		return nil, err
	}
	out := &Interval{Sigma: sigma, Coverage: cov, Regimes: map[Regime]*report.Coverage{}}
	classes := regimes(r)
	for _, g := range Regimes() {
		var recs []tracev2.Record
		ids := map[int64]bool{}
		for i, rg := range classes {
			if _, _, ok := measured(&r.Records[i]); ok && rg == g {
				recs = append(recs, r.Records[i])
				ids[r.Records[i].RequestID] = true
			}
		}
		if len(recs) == 0 {
			continue
		}
		if out.Regimes[g], err = coverageOf(r, recs, only(mid, ids), only(lo, ids), only(hi, ids)); err != nil {
			return nil, fmt.Errorf("%w (%s load)", err, g)
		}
	}
	return out, nil
}

// coverageOf is calibrate's coverage of the rows recs of r.
func coverageOf(r *Run, recs []tracev2.Record, mid, lo, hi []tracev2.SimResult) (*report.Coverage, error) {
	rep, err := report.Build(report.Input{Header: report.HeaderFrom(r.Header), Trace: recs, Sim: mid, SimLo: lo, SimHi: hi},
		report.DefaultConfig())
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s: interval: %w", r.Name, err)
	}
	if rep.Coverage == nil {
		return nil, fmt.Errorf("fidelity: run %s: interval: no coverage", r.Name)
	}
	return rep.Coverage, nil
}

// only keeps the results whose request id is in ids, in their order.
func only(sims []tracev2.SimResult, ids map[int64]bool) []tracev2.SimResult {
	var out []tracev2.SimResult
	for _, s := range sims {
		if ids[s.RequestID] {
			out = append(out, s)
		}
	}
	return out
}

// Count tallies real values against their intervals.
type Count struct {
	N, Inside, Below, Above int
}

// Share is the share of the values inside (0 of none).
func (c Count) Share() float64 {
	if c.N == 0 {
		return 0
	}
	return float64(c.Inside) / float64(c.N)
}

func (c *Count) addRequests(mc *report.MetricCoverage) {
	if mc == nil {
		return
	}
	c.N += mc.Requests
	c.Inside += mc.Inside
	c.Below += mc.Below
	c.Above += mc.Above
}

func (c *Count) addPercentile(p report.PercentileCoverage) {
	c.N++
	switch {
	case p.Inside:
		c.Inside++
	case p.RealUs < p.LoUs:
		c.Below++
	default:
		c.Above++
	}
}

// PooledCoverage pools the intervals of several runs.
type PooledCoverage struct {
	Runs int
	// Requests are every run's requests, by metric (ttft, e2e).
	Requests map[string]Count
	// Percentiles count the runs whose real percentile lies inside its
	// interval, by metric and statistic ("ttft p50").
	Percentiles map[string]Count
	// Regimes are every run's requests of each load, by metric.
	Regimes map[Regime]map[string]Count
}

// CoverageMetrics are the metrics an interval grades, in table order.
func CoverageMetrics() []string { return []string{report.MetricTTFT, report.MetricE2E} }

// CoverageStats are the percentiles an interval grades, in table order.
func CoverageStats() []string { return []string{"p50", "p90", "p99"} }

// poolCoverage pools the intervals of the runs (nil ones skipped).
func poolCoverage(ivs []*Interval) *PooledCoverage {
	p := &PooledCoverage{Requests: map[string]Count{}, Percentiles: map[string]Count{}, Regimes: map[Regime]map[string]Count{}}
	for _, iv := range ivs {
		if iv == nil || iv.Coverage == nil {
			continue
		}
		p.Runs++
		for _, name := range CoverageMetrics() {
			mc := iv.Coverage.Metrics[name]
			c := p.Requests[name]
			c.addRequests(mc)
			p.Requests[name] = c
			if mc == nil {
				continue
			}
			for _, pc := range mc.Percentiles {
				c := p.Percentiles[name+" "+pc.Stat]
				c.addPercentile(pc)
				p.Percentiles[name+" "+pc.Stat] = c
			}
		}
		for _, g := range Regimes() {
			cov, ok := iv.Regimes[g]
			if !ok {
				continue
			}
			if p.Regimes[g] == nil {
				p.Regimes[g] = map[string]Count{}
			}
			for _, name := range CoverageMetrics() {
				c := p.Regimes[g][name]
				c.addRequests(cov.Metrics[name])
				p.Regimes[g][name] = c
			}
		}
	}
	return p
}
