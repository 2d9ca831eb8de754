package report

import (
	"fmt"
	"math"
	"strings"

	"servesim/internal/quantile"
	"servesim/internal/tracev2"
)

// Coverage says how often the real values fall inside the simulated 90%
// intervals (replay --interval: the runs with every step time × 1 ∓
// 1.645σ beside the run itself), per request and for the percentiles of
// TTFT and E2E. A percentile's interval is [min, max] of the three runs'
// percentiles. A request's is [min, max] of its three simulated values,
// each taken over the phase of its arrival: a request that reached a busy
// engine waited w for the step in flight, of length d, and the real one
// arrived at a phase of its own step, uniform over it: its value spans the
// central 90% of that, [v − w + 0.05d, v − w + 0.95d] (wait_in_flight_us
// and step_in_flight_us of the results; none when they are absent). Of an
// honest 90% interval about 90% of the requests fall inside.
type Coverage struct {
	Level   float64                    `json:"level"` // 0.9
	Metrics map[string]*MetricCoverage `json:"metrics"`
}

// MetricCoverage is the coverage of one latency.
type MetricCoverage struct {
	Requests int     `json:"requests"` // with a result in each of the three runs
	Inside   int     `json:"inside"`
	Below    int     `json:"below"` // real faster than the fast-step run
	Above    int     `json:"above"` // real slower than the slow-step run
	Share    float64 `json:"coverage"`
	// Phased are the requests whose interval spans the phase of a step in
	// flight at their arrival.
	Phased int `json:"phased,omitempty"`
	// Missing are the matched requests one of the interval's runs did not
	// complete: left out.
	Missing     int                  `json:"missing,omitempty"`
	Percentiles []PercentileCoverage `json:"percentiles"`
}

// PercentileCoverage is one percentile of the real run against its
// simulated interval, in µs.
type PercentileCoverage struct {
	Stat   string  `json:"stat"` // p50, p90, p99
	RealUs float64 `json:"real_us"`
	LoUs   float64 `json:"lo_us"`
	HiUs   float64 `json:"hi_us"`
	Inside bool    `json:"inside"`
}

// coverage matches the trace against the interval's two runs as against
// the run itself (central) and counts the real values inside.
func coverage(in *Input, s *settings, central *matching) (*Coverage, error) {
	lo, hi := *in, *in
	lo.Sim, lo.SimLocs = in.SimLo, nil
	hi.Sim, hi.SimLocs = in.SimHi, nil
	ml, err := match(&lo, s)
	if err != nil {
		return nil, fmt.Errorf("interval (fast steps): %w", err)
	}
	mh, err := match(&hi, s)
	if err != nil {
		return nil, fmt.Errorf("interval (slow steps): %w", err)
	}
	c := &Coverage{Level: 0.9, Metrics: map[string]*MetricCoverage{}}
	ph := [3]map[int64]phase{phasesOf(in.Sim), phasesOf(in.SimLo), phasesOf(in.SimHi)}
	for _, name := range []string{MetricTTFT, MetricE2E} {
		c.Metrics[name] = metricCoverage([3]*pairs{central.metrics[name], ml.metrics[name], mh.metrics[name]}, ph)
	}
	return c, nil
}

// phase is where a simulated request arrived in the step in flight: the
// wait for its end and its length, µs.
type phase struct{ wait, step float64 }

// The central 90% of a phase uniform over the step in flight.
const phaseLo, phaseHi = 0.05, 0.95

// phasesOf indexes the requests of a run that arrived during a step.
func phasesOf(sims []tracev2.SimResult) map[int64]phase {
	m := map[int64]phase{}
	for i := range sims {
		if s := &sims[i]; s.StepInFlightUs > 0 {
			m[s.RequestID] = phase{wait: s.WaitInFlightUs, step: s.StepInFlightUs}
		}
	}
	return m
}

// metricCoverage counts the real values of runs[0] (the run itself) inside
// the interval its three runs (itself, fast steps, slow steps) span, each
// value widened over its arrival's phase (ph, indexed like runs).
func metricCoverage(runs [3]*pairs, ph [3]map[int64]phase) *MetricCoverage {
	index := func(p *pairs) map[int64]float64 {
		m := make(map[int64]float64, p.len())
		for i, id := range p.ids {
			m[id] = p.sim[i]
		}
		return m
	}
	mid, lo, hi := runs[0], runs[1], runs[2]
	li, hiIdx := index(lo), index(hi)
	mc := &MetricCoverage{}
	for i, id := range mid.ids {
		l, ok1 := li[id]
		h, ok2 := hiIdx[id]
		if !ok1 || !ok2 {
			mc.Missing++
			continue
		}
		a, b := math.Inf(1), math.Inf(-1)
		phased := false
		for k, v := range []float64{mid.sim[i], l, h} {
			p, ok := ph[k][id]
			phased = phased || ok
			a, b = min(a, v-p.wait+phaseLo*p.step), max(b, v-p.wait+phaseHi*p.step)
		}
		if phased {
			mc.Phased++
		}
		switch r := mid.real[i]; {
		case r < a:
			mc.Below++
		case r > b:
			mc.Above++
		default:
			mc.Inside++
		}
	}
	mc.Requests = mc.Inside + mc.Below + mc.Above
	if mc.Requests > 0 {
		mc.Share = float64(mc.Inside) / float64(mc.Requests)
	}
	rs, ms := mid.sorted()
	_, ls := lo.sorted()
	_, hs := hi.sorted()
	if len(rs) == 0 || len(ls) == 0 || len(hs) == 0 {
		return mc
	}
	for _, p := range []float64{50, 90, 99} {
		q := []float64{quantile.Sorted(ms, p), quantile.Sorted(ls, p), quantile.Sorted(hs, p)}
		pc := PercentileCoverage{Stat: fmt.Sprintf("p%g", p), RealUs: quantile.Sorted(rs, p),
			LoUs: math.Min(q[0], math.Min(q[1], q[2])), HiUs: math.Max(q[0], math.Max(q[1], q[2]))}
		pc.Inside = pc.LoUs <= pc.RealUs && pc.RealUs <= pc.HiUs
		mc.Percentiles = append(mc.Percentiles, pc)
	}
	return mc
}

// coverageText is the text line of the coverage, e.g. "interval coverage
// (90% intervals): ttft 91.2% of 480 requests (3 below, 39 above, 452 over
// their arrival's phase; p50 in, p90 in, p99 out); e2e ...".
func (r *Report) coverageText() string {
	if r.Coverage == nil {
		return ""
	}
	var parts []string
	for _, name := range []string{MetricTTFT, MetricE2E} {
		mc := r.Coverage.Metrics[name]
		var ps []string
		for _, p := range mc.Percentiles {
			where := "in"
			if !p.Inside {
				where = "out"
			}
			ps = append(ps, p.Stat+" "+where)
		}
		phased := ""
		if mc.Phased > 0 {
			phased = fmt.Sprintf(", %d over their arrival's phase", mc.Phased)
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%% of %d requests (%d below, %d above%s; %s)", name, 100*mc.Share, mc.Requests,
			mc.Below, mc.Above, phased, strings.Join(ps, ", ")))
	}
	return "interval coverage (90% intervals): " + strings.Join(parts, "; ")
}
