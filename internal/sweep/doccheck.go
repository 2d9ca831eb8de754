package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// check validates what a decoded document says, beyond its shape: the
// fields a sweep writes, its prices and every row.
func (s *docSource) check(d *Doc) error {
	if d.Format != DocFormat {
		return s.field("format", "%q: want %q (the JSON a sweep writes with --format json)", d.Format, DocFormat)
	}
	if d.Cases < 1 || d.Cases > MaxCases {
		return s.field("cases", "%d is outside [1, %d]", d.Cases, MaxCases)
	}
	if _, _, err := parseShard(d.Shard); err != nil {
		return s.field("shard", "%v", err)
	}
	if err := s.checkQuestion(d); err != nil {
		return err
	}
	if err := s.checkKeys(d); err != nil {
		return err
	}
	if err := s.checkInterval(d); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range d.Prices {
		if strings.TrimSpace(p.GPU) == "" || seen[strings.ToLower(p.GPU)] {
			return s.field("prices", "GPU %q is empty or priced twice", p.GPU)
		}
		seen[strings.ToLower(p.GPU)] = true
		if err := checkPrice(p.USDPerHour); err != nil {
			return s.field("prices", "%s: %v", p.GPU, err)
		}
	}
	type caseRate struct {
		k    int
		rate float64
	}
	rows := map[caseRate]int{}
	for i := range d.Rows {
		r := &d.Rows[i]
		if err := s.checkRow(d, i); err != nil {
			return err
		}
		key, what := caseRate{k: r.Case}, "case"
		if d.Find == FindMaxRate || r.Role == RoleSearch || r.Role == RoleCurve {
			key.rate, what = r.RateRPS, "case and rate of a max-rate search"
		}
		if first, dup := rows[key]; dup {
			return s.row(i, "", "case %d has a row already (rows[%d]): one row per %s", r.Case, first, what)
		}
		rows[key] = i
	}
	return nil
}

// checkQuestion checks the SLO (it must parse: the verdicts are read from
// it again), the question and its precision.
func (s *docSource) checkQuestion(d *Doc) error {
	at := Pos{File: s.name}
	if off, ok := s.top["slo"]; ok {
		at = s.pos(off)
		if !bytes.HasPrefix(s.data[off:], []byte(jsonText(d.SLO))) {
			at.Col = 0 // escapes: columns in the SLO are not the file's
		}
		at = at.shift(1) // past the opening quote
	}
	slo, err := parseSLO(d.SLO, at)
	if err != nil {
		return err
	}
	switch d.Find {
	case "", FindMaxRate, FindMinCost, FindMinGPUs, FindMinShed:
	default:
		return s.field("find", "%q: want max-rate, min-cost, min-gpus or min-shed", d.Find)
	}
	if d.Find != "" && slo.Empty() {
		return s.field("find", "%s needs an SLO, and the document has none", d.Find)
	}
	if d.Find == FindMaxRate && !(d.Precision >= 1e-4 && d.Precision <= 0.5) {
		return s.field("precision", "%v is outside [0.0001, 0.5]", d.Precision)
	}
	if d.Find != FindMaxRate && d.Precision != 0 {
		return s.field("precision", "%v: only a max-rate search has a precision", d.Precision)
	}
	return nil
}

// checkKeys checks the swept keys: named as keys are, each once.
func (s *docSource) checkKeys(d *Doc) error {
	seen := map[string]bool{}
	for _, k := range d.Keys {
		if k == "" || seen[k] {
			return s.field("keys", "key %q is empty or given twice", k)
		}
		if err := checkKeyName(k, Pos{}); err != nil {
			return s.field("keys", "key %q: keys are lower case with underscores", k)
		}
		seen[k] = true
	}
	return nil
}

// checkRow checks row i: its case, role, status and parameters, and every
// count, rate, latency and cost (finite, not negative).
func (s *docSource) checkRow(d *Doc, i int) error {
	r := &d.Rows[i]
	if r.Case < 0 || r.Case >= d.Cases {
		return s.row(i, "case", "%d is outside [0, %d)", r.Case, d.Cases)
	}
	switch {
	case r.Role != RoleGrid && r.Role != RoleProbe && r.Role != RoleSearch && r.Role != RoleCurve:
		return s.row(i, "role", "%q: want grid, probe, search or curve", r.Role)
	case d.Find == FindMaxRate && r.Role == RoleGrid:
		return s.row(i, "role", "%q: a max-rate search has no grid rows", r.Role)
	case r.Status != StatusOK && r.Status != StatusUnstable && r.Status != StatusInfeasible:
		return s.row(i, "status", "%q: want ok, unstable or infeasible", r.Status)
	}
	seen := map[string]bool{}
	for _, p := range r.Params {
		if seen[p.Key] || !contains(d.Keys, p.Key) {
			return s.row(i, "params", "key %q is not a swept key or is given twice", p.Key)
		}
		seen[p.Key] = true
	}
	counts := []struct {
		name string
		v    int64
	}{{"injected_requests", r.Injected}, {"completed_requests", r.Completed}, {"failed_requests", r.Failed},
		{"preemptions", r.Preemptions}, {"gpus", int64(r.GPUs)}}
	for _, c := range counts {
		if c.v < 0 {
			return s.row(i, c.name, "%d is negative", c.v)
		}
	}
	if r.Completed > r.Injected || r.Failed != r.Injected-r.Completed {
		return s.row(i, "failed_requests", "%d completed and %d failed do not add up to %d injected", r.Completed, r.Failed, r.Injected)
	}
	if !finite(r.QueueGrowth) {
		return s.row(i, "queue_growth", "%v is not finite", r.QueueGrowth)
	}
	nums := []struct {
		name string
		v    *float64
	}{{"rate_rps", &r.RateRPS}, {"duration_s", &r.DurationS}, {"throughput_rps", &r.ThroughputRPS},
		{"output_tokens_per_s", &r.TokensPerSec}, {"goodput_rps", &r.GoodputRPS}, {"slo_attainment", &r.SLOAttainment},
		{"kv_utilization_mean", &r.KVUtilizationMean}, {"kv_utilization_peak", &r.KVUtilizationPeak},
		{"cost_per_hour_usd", r.CostPerHour}, {"cost_per_million_output_tokens_usd", r.CostPerMTok}}
	for _, m := range sloMetrics {
		for _, st := range sloStats {
			if v, ok := r.Latency(m, st); ok {
				nums = append(nums, struct {
					name string
					v    *float64
				}{m + "_ms." + st, &v})
			}
		}
	}
	for _, n := range nums {
		if n.v != nil && !(*n.v >= 0 && !math.IsInf(*n.v, 0)) {
			return s.row(i, n.name, "%v must be finite and not negative", *n.v)
		}
	}
	if r.SLOAttainment > 1 {
		return s.row(i, "slo_attainment", "%v exceeds 1", r.SLOAttainment)
	}
	return nil
}

// MaxUSDPerGPUHour bounds a GPU's price: far above any GPU's, and low
// enough that a deployment's cost stays finite.
const MaxUSDPerGPUHour = 1e6

// checkPrice refuses a price a GPU-hour cannot have.
func checkPrice(usd float64) error {
	if !(usd >= 0 && usd <= MaxUSDPerGPUHour) {
		return fmt.Errorf("%v USD per GPU-hour: want a finite price in [0, %g]", usd, float64(MaxUSDPerGPUHour))
	}
	return nil
}

// jsonText is v as JSON, as the document writes it but without escaping
// HTML's characters (an SLO's '<').
func jsonText(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// checkInterval checks the interval a document asks for and the rows of
// its runs: each a row as checkRow wants it, of a variant the interval
// has, with a σ and a scale a run can have.
func (s *docSource) checkInterval(d *Doc) error {
	if d.Interval == nil {
		if len(d.IntervalRows) > 0 {
			return s.field("interval_rows", "%d rows of an interval, and the document asks for none", len(d.IntervalRows))
		}
		return nil
	}
	iv := d.Interval
	if iv.Seeds < 1 || iv.Seeds > MaxSeeds || !iv.On() {
		return s.field("interval", "%d seeds without the model, or outside [1, %d]: not an interval", iv.Seeds, MaxSeeds)
	}
	rows := &docSource{name: s.name, data: s.data, top: s.top}
	tmp := *d
	tmp.Rows = d.IntervalRows
	for i := range d.IntervalRows {
		if err := rows.checkRow(&tmp, i); err != nil {
			if e, ok := err.(*InputError); ok {
				e.Field = "interval_" + e.Field
			}
			return err
		}
		v := d.IntervalRows[i].Variant
		switch {
		case v == nil:
			return s.field("interval_rows", "interval_rows[%d] has no variant", i)
		case v.Side < -1 || v.Side > 1 || (v.Side != 0) != iv.Model || v.Seed < 0 || v.Seed >= iv.Seeds:
			return s.field("interval_rows", "interval_rows[%d]: variant side %d seed %d is not one of the interval's", i, v.Side, v.Seed)
		case !(v.Sigma >= 0 && v.Sigma <= 0.5) || !(v.Scale > 0) || math.IsInf(v.Scale, 0):
			return s.field("interval_rows", "interval_rows[%d]: σ %v or scale %v is not a run's (σ in [0, 0.5], scale > 0)", i, v.Sigma, v.Scale)
		}
	}
	return nil
}
