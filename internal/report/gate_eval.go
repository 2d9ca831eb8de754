package report

import (
	"strconv"
	"strings"
)

// GateResult is the outcome of the gates (report key "gate").
type GateResult struct {
	Passed   bool        `json:"passed"`
	Failures []string    `json:"failures"`
	Checks   []GateCheck `json:"-"`
}

// GateCheck is one evaluated comparison.
type GateCheck struct {
	Gate    string // the clause as written
	Subject string // e.g. "ttft mape"
	Actual  string // the report's value, formatted; "" when not computable
	Passed  bool
	Message string // why it failed; "" when it passed
}

// workloadField reads a workload-level key such as "p99_percent_error".
func workloadField(w *WorkloadLevel, key string) (float64, bool) {
	m := map[string]float64{
		"real_mean": w.RealMean, "sim_mean": w.SimMean, "mean_error": w.MeanError, "mean_percent_error": w.MeanPercentError,
		"real_median": w.RealMedian, "sim_median": w.SimMedian, "median_error": w.MedianError, "median_percent_error": w.MedianPercentError,
		"real_p50": w.RealP50, "sim_p50": w.SimP50, "p50_error": w.P50Error, "p50_percent_error": w.P50PercentError,
		"real_p90": w.RealP90, "sim_p90": w.SimP90, "p90_error": w.P90Error, "p90_percent_error": w.P90PercentError,
		"real_p95": w.RealP95, "sim_p95": w.SimP95, "p95_error": w.P95Error, "p95_percent_error": w.P95PercentError,
		"real_p99": w.RealP99, "sim_p99": w.SimP99, "p99_error": w.P99Error, "p99_percent_error": w.P99PercentError,
	}
	v, ok := m[key]
	return v, ok
}

func traceField(t *TraceInfo, key string) float64 {
	switch key {
	case "num_requests":
		return float64(t.NumRequests)
	case "warm_up_excluded":
		return float64(t.WarmUpExcluded)
	case "matched_pairs":
		return float64(t.MatchedPairs)
	case "token_mismatches":
		return float64(t.TokenMismatches)
	case "itl_dropped":
		return float64(t.ITLDropped)
	case "excluded_non_ok":
		return float64(t.ExcludedNonOK)
	case "invalid_timing":
		return float64(t.InvalidTiming)
	case "unmatched_real":
		return float64(t.UnmatchedReal)
	}
	return float64(t.UnmatchedSim)
}

// actual is a gate's value in the report: a number, a grade or a boolean.
type actual struct {
	num  float64
	word string
	b    bool
}

// lookup finds g's value in r; missing says why it cannot be computed.
func (g *Gate) lookup(r *Report) (a actual, missing string) {
	switch g.scope {
	case "metric":
		c := r.Metrics[g.metric]
		if c == nil {
			why := r.absent[g.metric]
			if why == "" {
				why = "the metric is absent"
			}
			return a, g.metric + " cannot be computed: " + why
		}
		switch g.key {
		case "mape":
			a.num = c.RequestLevel.MAPE
		case "pearson_r":
			a.num = c.RequestLevel.PearsonR
		case "grade":
			a.word = c.RequestLevel.Quality
		case "count":
			a.num = float64(c.Count)
		default:
			a.num, _ = workloadField(&c.WorkloadLevel, g.key)
		}
	case "trace":
		a.num = traceField(&r.TraceInfo, g.key)
	case "goodput":
		if r.Goodput == nil || r.Goodput.PerClass[g.class] == nil {
			return a, "goodput class " + g.class + " has no SLO targets"
		}
		cg := r.Goodput.PerClass[g.class]
		switch g.key {
		case "real_slo_attainment":
			a.num = cg.RealSLOAttainment
		case "sim_slo_attainment":
			a.num = cg.SimSLOAttainment
		case "real_goodput_rps":
			a.num = cg.RealGoodputRPS
		case "sim_goodput_rps":
			a.num = cg.SimGoodputRPS
		default:
			a.num = abs(cg.SimSLOAttainment - cg.RealSLOAttainment)
		}
	case "hit_rate":
		h := r.HitRate
		if h == nil {
			return a, "the hit-rate verdict is absent (it needs observed_kv_metrics in the trace header and cache_hit_rate in the sim metrics)"
		}
		switch g.key {
		case "abs_error_pp":
			a.num = h.AbsErrorPP
		case "real_hit_rate":
			a.num = h.RealHitRate
		case "sim_hit_rate":
			a.num = h.SimHitRate
		default:
			a.b = h.Within
		}
	case "validity":
		for _, c := range r.Validity.Checks {
			if c.Name != g.key {
				continue
			}
			if c.Status == StatusNotAssessed {
				return a, "validity check " + g.key + " was not assessed: " + c.Detail
			}
			a.b = c.Status == StatusFlagged
			return a, ""
		}
		return a, "validity check " + g.key + " is absent"
	case "valid":
		a.b = r.Validity.Valid
	case "config":
		c := &r.ConfigMatch
		if c.Match == nil {
			return a, "the config verdict is absent (it needs the simulation's deployment: replay's --metrics-out file as --sim-metrics)"
		}
		a.b, a.num = *c.Match, float64(len(c.Mismatched))
	}
	return a, ""
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func compare(op string, x, y float64) bool {
	switch op {
	case "<":
		return x < y
	case "<=":
		return x <= y
	case ">":
		return x > y
	case ">=":
		return x >= y
	case "==":
		return x == y
	}
	return x != y
}

// relation words for a failed comparison: "ttft grade fair is below good".
func failWords(op string) string {
	switch op {
	case "<":
		return "is not below"
	case "<=":
		return "is above"
	case ">":
		return "is not above"
	case ">=":
		return "is below"
	case "==":
		return "is not"
	}
	return "is"
}

func (g *Gate) format(a actual) string {
	switch g.kind {
	case kindGrade:
		return a.word
	case kindBool:
		return strconv.FormatBool(a.b)
	case kindLatency:
		return fmtDur(a.num)
	}
	return strconv.FormatFloat(a.num, 'g', 4, 64)
}

// eval checks one gate against r.
func (g *Gate) eval(r *Report) GateCheck {
	c := GateCheck{Gate: g.Text, Subject: g.name()}
	a, missing := g.lookup(r)
	if missing != "" {
		c.Message = g.name() + " fails (" + g.Text + "): " + missing
		return c
	}
	c.Actual = g.format(a)
	switch g.kind {
	case kindGrade:
		c.Passed = compare(g.op, float64(gradeRank(a.word)), float64(gradeRank(g.word)))
	case kindBool:
		c.Passed = (a.b == g.boolVal) == (g.op == "==")
	default:
		c.Passed = compare(g.op, a.num, g.num)
	}
	if !c.Passed {
		c.Message = g.name() + " " + c.Actual + " " + failWords(g.op) + " " + g.word
		if g.scope == "valid" && !a.b {
			c.Message += " (flagged: " + strings.Join(r.Validity.Flagged(), ", ") + ")"
		}
		if g.scope == "config" && len(r.ConfigMatch.Mismatched) > 0 {
			c.Message += " (" + strings.TrimPrefix(r.configHeadline(), "config: MISMATCH ") + ")"
		}
	}
	return c
}

// Evaluate checks every gate against r.
func (g Gates) Evaluate(r *Report) GateResult {
	res := GateResult{Passed: true, Failures: []string{}}
	for i := range g.list {
		c := g.list[i].eval(r)
		res.Checks = append(res.Checks, c)
		if !c.Passed {
			res.Passed = false
			res.Failures = append(res.Failures, c.Message)
		}
	}
	return res
}

// ApplyGates evaluates g, records the result in r.Gate (left nil when g is
// empty), and returns a *GateError naming every failed gate, or nil.
func (r *Report) ApplyGates(g Gates) error {
	if g.Len() == 0 {
		return nil
	}
	res := g.Evaluate(r)
	r.Gate = &res
	if !res.Passed {
		return &GateError{Failures: res.Failures}
	}
	return nil
}
