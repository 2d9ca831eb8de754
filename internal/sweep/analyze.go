package sweep

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"servesim/internal/noise"
)

// Answer is what a sweep's rows say: the max rate of each deployment, the
// cheapest deployment that meets the SLO, the knees of the latency curves
// and the Pareto fronts of cost against latency. It is computed from the
// rows alone (Analyze), so a merged sweep answers exactly as one run does.
type Answer struct {
	Primary  string      `json:"primary"` // the latency followed by knees, fronts and plots, e.g. ttft.p99
	Met      bool        `json:"met"`     // some case meets the SLO (true without an SLO)
	Verdict  []string    `json:"verdict"` // the answer in sentences, one per line
	MaxRates []MaxRate   `json:"max_rates,omitempty"`
	Best     []Best      `json:"best,omitempty"`
	Knees    []Knee      `json:"knees,omitempty"`
	Pareto   []ParetoSet `json:"pareto,omitempty"`
}

// MaxRate is the outcome of one deployment's max-rate search.
type MaxRate struct {
	Case        int      `json:"case"`
	Params      []Param  `json:"params"`
	MaxRateRPS  float64  `json:"max_rate_rps"`            // highest rate meeting the SLO; 0 = none
	FailRateRPS float64  `json:"fail_rate_rps,omitempty"` // lowest rate tried that failed
	FailReasons []string `json:"fail_reasons,omitempty"`  // why it failed there
	LatencyMs   float64  `json:"latency_ms,omitempty"`    // the primary latency at the max rate
	GPU         string   `json:"gpu,omitempty"`
	GPUs        int      `json:"gpus,omitempty"`
	CostPerHour *float64 `json:"cost_per_hour_usd,omitempty"`
	CostPerMTok *float64 `json:"cost_per_million_output_tokens_usd,omitempty"` // at the max rate
	Reason      string   `json:"reason,omitempty"`                             // infeasible deployment
	// Interval bounds the max rate when the sweep asks for one (Interval).
	Interval *RateInterval `json:"interval,omitempty"`
}

// Best is the cheapest (or smallest) deployment meeting the SLO under one
// load: the cases sharing the values of the load keys.
type Best struct {
	Load        []Param  `json:"load,omitempty"`
	Case        int      `json:"case"` // −1: none meets the SLO
	Params      []Param  `json:"params,omitempty"`
	GPU         string   `json:"gpu,omitempty"`
	GPUs        int      `json:"gpus,omitempty"`
	CostPerHour *float64 `json:"cost_per_hour_usd,omitempty"`
	CostPerMTok *float64 `json:"cost_per_million_output_tokens_usd,omitempty"`
	LatencyMs   float64  `json:"latency_ms,omitempty"`
	// Rejected, Failed and Injected are the best case's requests
	// (min-shed).
	Rejected int64 `json:"rejected_requests,omitempty"`
	Failed   int64 `json:"failed_requests,omitempty"`
	Injected int64 `json:"injected_requests,omitempty"`
	// Fleet is the best case's fleet in total (with a fleet file), and
	// Static, for min-cost over fleets, the cheapest fleet meeting the SLO
	// that keeps its replicas (no autoscaler): the fleet sized for the
	// peak.
	Fleet  *FleetRow    `json:"fleet,omitempty"`
	Static *StaticFleet `json:"cheapest_static_fleet,omitempty"`
	Met    int          `json:"cases_met"`
	Of     int          `json:"cases"`
	// Closest is, when none meets the SLO, the steady case with the lowest
	// primary latency (−1: no steady case).
	Closest int `json:"closest,omitempty"`
	// Interval bounds the answer when the sweep asks for one (Interval).
	Interval *BestInterval `json:"interval,omitempty"`
}

// Knee is where a latency curve bends: the point of the curve farthest
// below the straight line joining its ends, both axes scaled to [0, 1]
// (Kneedle, Satopää et al. 2011). Past it, latency grows faster than load.
type Knee struct {
	Curve     []Param `json:"curve"` // the parameters shared by the curve's points
	RateRPS   float64 `json:"rate_rps"`
	LatencyMs float64 `json:"latency_ms"`
	// SeedNoise is the knee rate's noise over the seeds (two or more): the
	// knee of each seed's own curve (the harmonic mean over its two scales
	// when the model's σ is on), their mean, 95% interval and CV.
	SeedNoise *noise.Estimate `json:"seed_noise,omitempty"`
}

// ParetoSet is a Pareto front: under one load, the deployments that no
// other beats on both cost per hour and the primary latency; for a
// max-rate search, on both cost per hour and max rate.
type ParetoSet struct {
	Load   []Param       `json:"load,omitempty"`
	Of     string        `json:"of"` // "latency" or "max_rate"
	Points []ParetoPoint `json:"points"`
}

// StaticFleet is a case whose fleet keeps its replicas, and its totals.
type StaticFleet struct {
	Case   int       `json:"case"`
	Params []Param   `json:"params,omitempty"`
	Fleet  *FleetRow `json:"fleet"`
}

// ParetoPoint is one deployment of a front, cheapest first.
type ParetoPoint struct {
	Case        int     `json:"case"`
	CostPerHour float64 `json:"cost_per_hour_usd"`
	Value       float64 `json:"value"` // latency (ms) or max rate (req/s)
}

// Analyze computes the answer of a sweep from its rows (sorted by SortRows).
func Analyze(d *Doc) *Answer {
	slo, _ := ParseSLO(d.SLO)
	metric, stat := slo.Primary()
	a := &Answer{Primary: metric + "." + stat, Met: slo.Empty()}
	primary := func(r *Row) (float64, bool) { return r.Latency(metric, stat) }
	if d.Find == FindMaxRate {
		a.maxRates(d, primary)
	} else {
		a.best(d, slo, primary)
	}
	a.knees(d, primary)
	if !slo.Empty() && d.Find == "" {
		met := 0
		for i := range d.Rows {
			if d.Rows[i].Met() {
				met++
			}
		}
		a.Met = met > 0
		a.Verdict = append(a.Verdict, fmt.Sprintf("%d of %d cases meet %s", met, len(d.Rows), slo))
	}
	return a
}

// byCase groups the rows of each case, in case order.
func byCase(rows []Row) [][]Row {
	var out [][]Row
	for i := 0; i < len(rows); {
		j := i
		for j < len(rows) && rows[j].Case == rows[i].Case {
			j++
		}
		out = append(out, rows[i:j])
		i = j
	}
	return out
}

// maxRateRow returns the row of a case's max rate (the highest passing
// rate below the lowest failing one; nil when none passes) and the row of
// the lowest failing rate (nil when none fails).
func maxRateRow(rows []Row) (at, fail *Row) {
	for i := range rows {
		if !rows[i].Met() && (fail == nil || rows[i].RateRPS < fail.RateRPS) {
			fail = &rows[i]
		}
	}
	for i := range rows {
		if rows[i].Met() && (fail == nil || rows[i].RateRPS < fail.RateRPS) && (at == nil || rows[i].RateRPS > at.RateRPS) {
			at = &rows[i]
		}
	}
	return at, fail
}

func (a *Answer) maxRates(d *Doc, primary func(*Row) (float64, bool)) {
	ivRows := map[int][]Row{}
	for _, r := range d.IntervalRows {
		ivRows[r.Case] = append(ivRows[r.Case], r)
	}
	for _, rows := range byCase(d.Rows) {
		m := MaxRate{Case: rows[0].Case, Params: rows[0].Params, GPU: rows[0].GPU, GPUs: rows[0].GPUs}
		if rows[0].Status == StatusInfeasible {
			m.Reason = rows[0].Reason
			a.MaxRates = append(a.MaxRates, m)
			a.Verdict = append(a.Verdict, fmt.Sprintf("%s: infeasible: %s", paramText(m.Params), m.Reason))
			continue
		}
		at, fail := maxRateRow(rows)
		if fail != nil {
			m.FailRateRPS, m.FailReasons = fail.RateRPS, fail.SLOFailures
		}
		if at != nil {
			m.MaxRateRPS, m.CostPerHour, m.CostPerMTok = at.RateRPS, at.CostPerHour, at.CostPerMTok
			m.LatencyMs, _ = primary(at)
			a.Met = true
		}
		if d.Interval != nil {
			m.Interval = rateInterval(m.MaxRateRPS, ivRows[m.Case], d.Interval.Seeds)
		}
		a.MaxRates = append(a.MaxRates, m)
		a.Verdict = append(a.Verdict, maxRateText(m, d.Precision, a.Primary))
	}
	a.paretoMaxRate()
}

func maxRateText(m MaxRate, precision float64, primary string) string {
	who := paramText(m.Params)
	if who == "" {
		who = "the deployment"
	}
	if m.MaxRateRPS == 0 {
		why := strings.Join(m.FailReasons, ", ")
		s := fmt.Sprintf("%s: no rate meets the SLO (at %s req/s, the lowest tried: %s)", who, fmtRate(m.FailRateRPS), why)
		if m.Interval != nil && m.Interval.HiRPS > 0 {
			s += "; " + m.Interval.text()
		}
		return s
	}
	iv := ""
	if m.Interval != nil {
		iv = " (" + m.Interval.text() + ")"
	}
	s := fmt.Sprintf("%s: max rate %s req/s%s under the SLO (±%s; %s %s there)", who, fmtRate(m.MaxRateRPS), iv,
		fmtPctP(precision), primary, fmtMs(m.LatencyMs))
	if m.FailRateRPS > 0 {
		s += fmt.Sprintf("; %s req/s fails: %s", fmtRate(m.FailRateRPS), strings.Join(m.FailReasons, ", "))
	}
	if m.CostPerHour != nil {
		s += fmt.Sprintf("; %d × %s, $%.2f/h", m.GPUs, m.GPU, *m.CostPerHour)
		if m.CostPerMTok != nil {
			s += fmt.Sprintf(", $%.3f per million output tokens at that rate", *m.CostPerMTok)
		}
	}
	return s
}

// LoadParams are a row's load parameters (the values of loadKeys) and
// their text: the group of rows it is compared within.
func LoadParams(r *Row, loadKeys []string) ([]Param, string) {
	var ps []Param
	for _, p := range r.Params {
		if contains(loadKeys, p.Key) {
			ps = append(ps, p)
		}
	}
	return ps, paramText(ps)
}

func (a *Answer) best(d *Doc, slo SLO, primary func(*Row) (float64, bool)) {
	type group struct {
		load []Param
		rows []*Row
	}
	var groups []*group
	index := map[string]*group{}
	for i := range d.Rows {
		r := &d.Rows[i]
		load, key := LoadParams(r, d.LoadKeys)
		g := index[key]
		if g == nil {
			g = &group{load: load}
			index[key] = g
			groups = append(groups, g)
		}
		g.rows = append(g.rows, r)
	}
	ivRows, sigma := map[string][]*Row{}, 0.0
	for i := range d.IntervalRows {
		r := &d.IntervalRows[i]
		_, key := LoadParams(r, d.LoadKeys)
		ivRows[key] = append(ivRows[key], r)
		sigma = math.Max(sigma, r.Variant.Sigma)
	}
	for _, g := range groups {
		a.pareto(g.load, g.rows, primary)
		if d.Find != FindMinCost && d.Find != FindMinGPUs && d.Find != FindMinShed {
			continue
		}
		b := Best{Load: g.load, Case: -1, Closest: -1, Of: len(g.rows)}
		var best, closest, static *Row
		bestLat := math.Inf(1)
		for _, r := range g.rows {
			lat, ok := primary(r)
			if ok && (closest == nil || lat < bestLat) {
				closest, bestLat = r, lat
			}
			if !r.Met() {
				continue
			}
			b.Met++
			if best == nil || cheaper(r, best, d.Find, primary) {
				best = r
			}
			if r.Fleet != nil && !r.Fleet.Autoscaled && (static == nil || cheaper(r, static, d.Find, primary)) {
				static = r
			}
		}
		if best != nil {
			b.Case, b.Params, b.GPU, b.GPUs = best.Case, best.Params, best.GPU, best.GPUs
			b.CostPerHour, b.CostPerMTok = best.CostPerHour, best.CostPerMTok
			b.LatencyMs, _ = primary(best)
			if d.Find == FindMinShed {
				b.Rejected, b.Failed, b.Injected = best.Rejected, best.Failed, best.Injected
			}
			b.Fleet = best.Fleet
			if static != nil && d.Find == FindMinCost {
				b.Static = &StaticFleet{Case: static.Case, Params: static.Params, Fleet: static.Fleet}
			}
			a.Met = true
		} else if closest != nil {
			b.Closest = closest.Case
		}
		text := bestText(b, d, slo, closest)
		if d.Interval != nil {
			_, key := LoadParams(g.rows[0], d.LoadKeys)
			b.Interval = bestInterval(best, ivRows[key], d.Find, primary)
			text += "; " + b.Interval.text(sigma)
		}
		a.Best = append(a.Best, b)
		a.Verdict = append(a.Verdict, text)
	}
}

// cheaper orders the deployments meeting the SLO: by cost per hour (GPUs
// for min-gpus), then GPUs (cost), then the primary latency, then case;
// for min-shed by rejected requests, then failed ones, then cost, then
// the primary latency, then case. A row without a price comes after every
// priced row of equal rank.
func cheaper(r, than *Row, find string, primary func(*Row) (float64, bool)) bool {
	fleets := r.Fleet != nil && than.Fleet != nil
	cost := func(x *Row) float64 {
		if fleets {
			return x.Fleet.Dollars // over the same trace: what the run cost
		}
		if x.CostPerHour == nil {
			return math.Inf(1)
		}
		return *x.CostPerHour
	}
	keys := func(x *Row) []float64 {
		lat, _ := primary(x)
		switch find {
		case FindMinGPUs:
			return []float64{float64(x.GPUs), cost(x), lat, float64(x.Case)}
		case FindMinShed:
			return []float64{float64(x.Rejected), float64(x.Failed), cost(x), lat, float64(x.Case)}
		}
		return []float64{cost(x), float64(x.GPUs), lat, float64(x.Case)}
	}
	ka, kb := keys(r), keys(than)
	for i := range ka {
		if ka[i] != kb[i] {
			return ka[i] < kb[i]
		}
	}
	return false
}

func bestText(b Best, d *Doc, slo SLO, closest *Row) string {
	under := ""
	if len(b.Load) > 0 {
		under = " at " + paramText(b.Load)
	}
	what := "cheapest"
	switch d.Find {
	case FindMinGPUs:
		what = "smallest"
	case FindMinShed:
		what = "least shedding"
	}
	if b.Case < 0 {
		s := fmt.Sprintf("no deployment of the grid meets %s%s (0 of %d)", slo, under, b.Of)
		if closest != nil {
			lat, _ := closest.Latency(slo.Primary())
			m, st := slo.Primary()
			s += fmt.Sprintf("; the closest, %s, has %s.%s %s: widen the grid", paramText(closest.Params), m, st, fmtMs(lat))
		}
		return s
	}
	s := fmt.Sprintf("%s deployment meeting %s%s: %s: %d × %s", what, slo, under, paramText(b.Params), b.GPUs, b.GPU)
	if d.Find == FindMinShed {
		s += fmt.Sprintf(", %d rejected and %d failed of %d requests", b.Rejected, b.Failed, b.Injected)
	}
	if b.CostPerHour != nil {
		s += fmt.Sprintf(", $%.2f/h", *b.CostPerHour)
		if b.CostPerMTok != nil {
			s += fmt.Sprintf(", $%.3f per million output tokens", *b.CostPerMTok)
		}
	} else {
		s += " (no price for " + b.GPU + ": give --prices)"
	}
	if b.Fleet != nil {
		s += "; " + fleetText(b.Fleet)
	}
	m, st := slo.Primary()
	s += fmt.Sprintf("; %s.%s %s; %d of %d deployments meet the SLO", m, st, fmtMs(b.LatencyMs), b.Met, b.Of)
	if b.Static != nil && b.Static.Case != b.Case {
		s += fmt.Sprintf("; the cheapest static fleet meeting it: %s, %s", paramText(b.Static.Params), fleetText(b.Static.Fleet))
	}
	return s
}

// pareto adds the front of cost per hour against the primary latency of
// the steady, priced rows of one load.
func (a *Answer) pareto(load []Param, rows []*Row, primary func(*Row) (float64, bool)) {
	var pts []ParetoPoint
	for _, r := range rows {
		lat, ok := primary(r)
		if ok && r.CostPerHour != nil {
			pts = append(pts, ParetoPoint{Case: r.Case, CostPerHour: *r.CostPerHour, Value: lat})
		}
	}
	if front := frontier(pts, false); len(front) > 0 {
		a.Pareto = append(a.Pareto, ParetoSet{Load: load, Of: "latency", Points: front})
	}
}

func (a *Answer) paretoMaxRate() {
	var pts []ParetoPoint
	for _, m := range a.MaxRates {
		if m.MaxRateRPS > 0 && m.CostPerHour != nil {
			pts = append(pts, ParetoPoint{Case: m.Case, CostPerHour: *m.CostPerHour, Value: m.MaxRateRPS})
		}
	}
	if front := frontier(pts, true); len(front) > 0 {
		a.Pareto = append(a.Pareto, ParetoSet{Of: "max_rate", Points: front})
	}
}

// frontier keeps the points no other point beats: cheaper or as cheap and
// better (lower value, or higher when higherBetter), sorted by cost.
func frontier(pts []ParetoPoint, higherBetter bool) []ParetoPoint {
	better := func(x, y float64) bool {
		if higherBetter {
			return x > y
		}
		return x < y
	}
	sort.SliceStable(pts, func(i, j int) bool {
		if pts[i].CostPerHour != pts[j].CostPerHour {
			return pts[i].CostPerHour < pts[j].CostPerHour
		}
		if pts[i].Value != pts[j].Value {
			return better(pts[i].Value, pts[j].Value)
		}
		return pts[i].Case < pts[j].Case
	})
	var out []ParetoPoint
	for _, p := range pts {
		if len(out) == 0 || better(p.Value, out[len(out)-1].Value) {
			out = append(out, p)
		}
	}
	return out
}

// knees finds the knee of every latency curve: the steady rows that share
// every parameter but the rate, at three rates or more. With several
// seeds, each knee states the spread of the knees of the seeds' curves.
func (a *Answer) knees(d *Doc, primary func(*Row) (float64, bool)) {
	own, keys := kneesOf(d.Rows, d.Find, primary)
	a.Knees = append(a.Knees, own...)
	if d.Interval == nil || d.Interval.Seeds < 2 || len(own) == 0 {
		return
	}
	perSeed := map[string]map[int][]float64{}
	for _, rows := range byVariant(d.IntervalRows) {
		ks, ids := kneesOf(rows, d.Find, primary)
		for i, k := range ks {
			if perSeed[ids[i]] == nil {
				perSeed[ids[i]] = map[int][]float64{}
			}
			seed := rows[0].Variant.Seed
			perSeed[ids[i]][seed] = append(perSeed[ids[i]][seed], k.RateRPS)
		}
	}
	for i := range own {
		ps := perSeed[keys[i]]
		if ps == nil {
			continue
		}
		if len(ps[0]) == 0 { // without the model's σ, seed 0 is the case's own run
			ps[0] = []float64{own[i].RateRPS}
		}
		a.Knees[len(a.Knees)-len(own)+i].SeedNoise = seedNoise(ps, d.Interval.Seeds)
	}
}

// kneesOf is the knee of every latency curve of rows, and each curve's key.
func kneesOf(rows []Row, find string, primary func(*Row) (float64, bool)) ([]Knee, []string) {
	type curve struct {
		key    string
		params []Param
		x, y   []float64
	}
	var curves []*curve
	index := map[string]*curve{}
	for i := range rows {
		r := &rows[i]
		lat, ok := primary(r)
		if !ok || r.Role == RoleProbe || r.RateRPS <= 0 {
			continue
		}
		var ps []Param
		for _, p := range r.Params {
			if p.Key != "rate" {
				ps = append(ps, p)
			}
		}
		key := fmt.Sprint(r.Case*boolInt(find == FindMaxRate), paramText(ps))
		c := index[key]
		if c == nil {
			c = &curve{key: key, params: ps}
			index[key] = c
			curves = append(curves, c)
		}
		c.x, c.y = append(c.x, r.RateRPS), append(c.y, lat)
	}
	var knees []Knee
	var keys []string
	for _, c := range curves {
		idx := make([]int, len(c.x))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return c.x[idx[i]] < c.x[idx[j]] })
		x, y := make([]float64, len(idx)), make([]float64, len(idx))
		for i, k := range idx {
			x[i], y[i] = c.x[k], c.y[k]
		}
		c.x, c.y = x, y
		if i, ok := kneedle(c.x, c.y); ok {
			knees = append(knees, Knee{Curve: c.params, RateRPS: c.x[i], LatencyMs: c.y[i]})
			keys = append(keys, c.key)
		}
	}
	return knees, keys
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// kneedle returns the index of the knee of a curve given by points sorted
// by x, or false when the curve has fewer than three points or does not
// bend upward.
func kneedle(x, y []float64) (int, bool) {
	if len(x) < 3 {
		return 0, false
	}
	x0, x1 := x[0], x[len(x)-1]
	y0, y1 := y[0], y[0]
	for _, v := range y {
		y0, y1 = math.Min(y0, v), math.Max(y1, v)
	}
	if x1 <= x0 || y1 <= y0 {
		return 0, false
	}
	best, at := 0.0, -1
	for i := 1; i < len(x)-1; i++ {
		d := (x[i]-x0)/(x1-x0) - (y[i]-y0)/(y1-y0)
		if d > best {
			best, at = d, i
		}
	}
	return at, at >= 0
}

// paramText renders parameters as key=value pairs separated by spaces.
func paramText(ps []Param) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Key + "=" + p.Value
	}
	return strings.Join(parts, " ")
}

// ParamText renders parameters as key=value pairs separated by spaces.
func ParamText(ps []Param) string { return paramText(ps) }

func fmtRate(r float64) string { return fmt.Sprintf("%.4g", r) }

func fmtPctP(p float64) string { return fmt.Sprintf("%.3g%%", 100*p) }

// fleetText is a fleet's totals over a run.
func fleetText(f *FleetRow) string {
	kind := "static"
	if f.Autoscaled {
		kind = "autoscaled"
	}
	return fmt.Sprintf("%s fleet, $%.2f and %.2f GPU-hours over the run, at most %d replicas", kind, f.Dollars, f.GPUHours, f.PeakReplicas)
}
