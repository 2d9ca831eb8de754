package sweep

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"

	"servesim/internal/noise"
)

// Interval is what a sweep's interval asks (--interval, --seeds): beside
// each case as it is, the runs that bound what it may really do.
//
//   - Model: the latency model's step times are uncertain by a relative σ
//     (the deployment's step_time_sigma: a fit's residual spread, else the
//     model's documented default), one error ε ~ N(0, σ) for a whole run.
//     Each case runs again with every step time × (1 − zσ) and × (1 + zσ),
//     z = 1.645: the ends of a 90% interval of ε.
//   - Seeds: each case runs with Seeds seeds (the case's own, +1, +2, ...);
//     the seeds' spread adds to the model's.
//
// A latency's interval is [min, max] over the case's runs: in practice the
// lowest value of a seed at the low scale and the highest of a seed at the
// high scale. A max rate's is [min, max] of the max rates the runs find
// (each run's own search: the high scale gives the low end), a min-cost
// answer's the cheapest deployment meeting the SLO under each run.
type Interval struct {
	Model bool `json:"model"` // runs at the step-time scales 1 ± zσ
	Seeds int  `json:"seeds"` // seeds per case (1: the case's own)
}

// On reports whether the interval asks for any run beside the case's own.
func (iv Interval) On() bool { return iv.Model || iv.Seeds > 1 }

// Variants are the runs of a case beside its own: with the model, each
// seed at both scales; without, the further seeds at the model as it is.
func (iv Interval) Variants() []Variant {
	var out []Variant
	for seed := 0; seed < max(iv.Seeds, 1); seed++ {
		if iv.Model {
			out = append(out, Variant{Side: -1, Seed: seed}, Variant{Side: 1, Seed: seed})
		} else if seed > 0 {
			out = append(out, Variant{Seed: seed})
		}
	}
	return out
}

// Variant is one run of a case under its interval.
type Variant struct {
	Side int `json:"side"` // −1: steps faster by zσ; +1: slower by zσ; 0: the model as it is
	Seed int `json:"seed"` // added to the case's seed
	// Sigma and Scale are the runner's: the case's σ and the step-time
	// scale 1 + Side·z·σ it ran at.
	Sigma float64 `json:"step_time_sigma"`
	Scale float64 `json:"step_time_scale"`
}

// less orders variants (nil, the case's own run, first) by seed, then side.
func (v *Variant) less(w *Variant) bool {
	switch {
	case v == nil || w == nil:
		return v == nil && w != nil
	case v.Seed != w.Seed:
		return v.Seed < w.Seed
	}
	return v.Side < w.Side
}

// VariantFunc runs case c at rate (as RunFunc) under variant v; it sets
// the row's Variant with the σ and the scale it ran at.
type VariantFunc func(ctx context.Context, c Case, rate float64, v Variant) (Row, error)

// variants runs case c's variants, given the case's own rows: for a grid
// case, each variant at the case's load; for a max-rate search, each
// variant at every rate the search tried (the probe's aside) and then its
// own narrowing to the max rate under that variant.
func (ex *executor) variants(ctx context.Context, c Case, own []Row) ([]Row, error) {
	vs := ex.plan.Interval.Variants()
	if len(vs) == 0 || len(own) == 0 || own[0].Status == StatusInfeasible {
		return nil, nil
	}
	per := make([][]Row, len(vs))
	errs := make([]error, len(vs))
	var wg sync.WaitGroup
	for i := range vs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ex.plan.Spec.Find != FindMaxRate {
				var r Row
				r, errs[i] = ex.eval(ctx, c, 0, RoleGrid, &vs[i])
				per[i] = []Row{r}
				return
			}
			per[i], errs[i] = ex.searchVariant(ctx, c, &vs[i], own)
		}()
	}
	wg.Wait()
	var out []Row
	for i := range vs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out = append(out, per[i]...)
	}
	return out, nil
}

// searchVariant is the max-rate search of case c under variant v, started
// from the rates the case's own search tried (own): its bracket is there
// already, so only the narrowing runs again.
func (ex *executor) searchVariant(ctx context.Context, c Case, v *Variant, own []Row) ([]Row, error) {
	s := ex.searcher(c, v)
	mu := 0.0
	for _, role := range []string{RoleSearch, RoleCurve} {
		var rates []float64
		for i := range own {
			switch {
			case own[i].Role == RoleProbe:
				mu = own[i].ThroughputRPS
			case own[i].Role == role:
				rates = append(rates, own[i].RateRPS)
			}
		}
		if err := s.run(ctx, role, rates...); err != nil {
			return nil, err
		}
	}
	if len(s.rows) == 0 {
		return nil, nil
	}
	hi, lo := math.Inf(1), 0.0
	for i := range s.rows {
		if r := &s.rows[i]; !r.Met() && r.RateRPS < hi {
			hi = r.RateRPS
		}
	}
	for i := range s.rows {
		if r := &s.rows[i]; r.Met() && r.RateRPS < hi && r.RateRPS > lo {
			lo = r.RateRPS
		}
	}
	switch {
	case math.IsInf(hi, 1): // every rate passes: narrow doubles from the highest
		for i := range s.rows {
			lo = math.Max(lo, s.rows[i].RateRPS)
		}
		hi = lo
	case lo == 0: // every rate fails: narrow divides from the lowest
		lo = hi
	}
	if _, _, err := s.narrow(ctx, lo, hi, mu); err != nil {
		return nil, err
	}
	return sorted(s.rows), nil
}

// Band is the interval of a row's latencies (Interval): each statistic's
// lowest and highest value over the case's runs at the row's rate. An
// upper end is absent when a run reached no steady state (Unstable > 0):
// the latency is then unbounded within the interval.
type Band struct {
	Runs     int      `json:"runs"` // the row's own included
	Unstable int      `json:"unstable_runs,omitempty"`
	TTFTLo   *Latency `json:"ttft_lo_ms,omitempty"`
	TTFTHi   *Latency `json:"ttft_hi_ms,omitempty"`
	TPOTLo   *Latency `json:"tpot_lo_ms,omitempty"`
	TPOTHi   *Latency `json:"tpot_hi_ms,omitempty"`
	ITLLo    *Latency `json:"itl_lo_ms,omitempty"`
	ITLHi    *Latency `json:"itl_hi_ms,omitempty"`
	E2ELo    *Latency `json:"e2e_lo_ms,omitempty"`
	E2EHi    *Latency `json:"e2e_hi_ms,omitempty"`
}

// Bounds returns the interval of a latency statistic; hiOK is false when
// the upper end is unbounded (or the band is nil).
func (b *Band) Bounds(metric, stat string) (lo, hi float64, loOK, hiOK bool) {
	if b == nil {
		return 0, 0, false, false
	}
	var l, h *Latency
	switch metric {
	case "ttft":
		l, h = b.TTFTLo, b.TTFTHi
	case "tpot":
		l, h = b.TPOTLo, b.TPOTHi
	case "itl":
		l, h = b.ITLLo, b.ITLHi
	case "e2e":
		l, h = b.E2ELo, b.E2EHi
	}
	lo, loOK = l.Stat(stat)
	hi, hiOK = h.Stat(stat)
	return lo, hi, loOK, hiOK
}

// band is the interval of row r from the rows of its variants.
func band(r *Row, variants []*Row) *Band {
	runs := append([]*Row{r}, variants...)
	b := &Band{Runs: len(runs)}
	for _, x := range runs {
		if x.TTFT == nil {
			b.Unstable++
		}
	}
	spread := func(get func(*Row) *Latency) (lo, hi *Latency) {
		for _, x := range runs {
			l := get(x)
			if l == nil {
				continue
			}
			if lo == nil {
				a, c := *l, *l
				lo, hi = &a, &c
				continue
			}
			lo.Mean, hi.Mean = math.Min(lo.Mean, l.Mean), math.Max(hi.Mean, l.Mean)
			lo.P50, hi.P50 = math.Min(lo.P50, l.P50), math.Max(hi.P50, l.P50)
			lo.P90, hi.P90 = math.Min(lo.P90, l.P90), math.Max(hi.P90, l.P90)
			lo.P95, hi.P95 = math.Min(lo.P95, l.P95), math.Max(hi.P95, l.P95)
			lo.P99, hi.P99 = math.Min(lo.P99, l.P99), math.Max(hi.P99, l.P99)
		}
		if b.Unstable > 0 {
			hi = nil
		}
		return lo, hi
	}
	b.TTFTLo, b.TTFTHi = spread(func(x *Row) *Latency { return x.TTFT })
	b.TPOTLo, b.TPOTHi = spread(func(x *Row) *Latency { return x.TPOT })
	b.ITLLo, b.ITLHi = spread(func(x *Row) *Latency { return x.ITL })
	b.E2ELo, b.E2EHi = spread(func(x *Row) *Latency { return x.E2E })
	return b
}

// setBands gives every row but the probes its Band, from the interval's
// rows of the same case at the same rate.
func (d *Doc) setBands() {
	type at struct {
		c    int
		rate float64
	}
	byRow := map[at][]*Row{}
	for i := range d.IntervalRows {
		r := &d.IntervalRows[i]
		byRow[at{r.Case, r.RateRPS}] = append(byRow[at{r.Case, r.RateRPS}], r)
	}
	for i := range d.Rows {
		r := &d.Rows[i]
		r.Band = nil
		if d.Interval != nil && r.Role != RoleProbe && r.Status != StatusInfeasible {
			r.Band = band(r, byRow[at{r.Case, r.RateRPS}])
		}
	}
}

// RateInterval is the interval of a max rate: the lowest and highest max
// rate the case's runs found (Interval).
type RateInterval struct {
	LoRPS float64 `json:"lo_rps"`
	HiRPS float64 `json:"hi_rps"`
	Sigma float64 `json:"step_time_sigma,omitempty"` // the case's σ (0: seeds only)
	Seeds int     `json:"seeds"`
	// SeedNoise is the max rate's noise over the seeds (two or more): each
	// seed's max rate (the harmonic mean of its runs at the two scales when
	// the model's σ is on, so the scales cancel), their mean, 95% interval and
	// coefficient of variation.
	SeedNoise *noise.Estimate `json:"seed_noise,omitempty"`
}

// variantKey identifies a variant's runs.
type variantKey struct{ side, seed int }

// byVariant groups rows by their variant, in the order of Variants.
func byVariant(rows []Row) [][]Row {
	var out [][]Row
	index := map[variantKey]int{}
	for _, r := range rows {
		if r.Variant == nil {
			continue
		}
		k := variantKey{r.Variant.Side, r.Variant.Seed}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	return out
}

// rateInterval is the interval of max rate m from its case's variant rows.
func rateInterval(m float64, variants []Row, seeds int) *RateInterval {
	iv := &RateInterval{LoRPS: m, HiRPS: m, Seeds: max(seeds, 1)}
	perSeed := map[int][]float64{}
	for _, rows := range byVariant(variants) {
		at, _ := maxRateRow(rows)
		r := 0.0
		if at != nil {
			r = at.RateRPS
		}
		iv.LoRPS, iv.HiRPS = math.Min(iv.LoRPS, r), math.Max(iv.HiRPS, r)
		iv.Sigma = math.Max(iv.Sigma, rows[0].Variant.Sigma)
		perSeed[rows[0].Variant.Seed] = append(perSeed[rows[0].Variant.Seed], r)
	}
	if len(perSeed[0]) == 0 { // without the model's σ, seed 0 is the case's own run
		perSeed[0] = []float64{m}
	}
	iv.SeedNoise = seedNoise(perSeed, iv.Seeds)
	return iv
}

// seedNoise is the estimate over seeds 0..seeds−1 of each seed's rate: the
// harmonic mean of its runs. A rate found with every step × (1 ∓ zσ) is
// the rate at the model's own steps ÷ (1 ∓ zσ), and the harmonic mean of
// the pair gives that rate back, where their plain mean would sit about
// (zσ)² above it (10% at σ 19%). A seed whose max rate at either scale is
// 0 (no rate met the SLO) is left out: its rate is not known. Nil with
// fewer than two seeds left.
func seedNoise(perSeed map[int][]float64, seeds int) *noise.Estimate {
	var xs []float64
	for seed := range seeds {
		if v := perSeed[seed]; len(v) > 0 {
			inv := 0.0
			for _, x := range v {
				inv += 1 / x
			}
			if !math.IsInf(inv, 1) {
				xs = append(xs, float64(len(v))/inv)
			}
		}
	}
	if len(xs) < 2 {
		return nil
	}
	e := noise.Of(xs)
	return &e
}

// text is how a verdict states the interval: "90% interval 15.8–18.9:
// model σ 19%, 3 seeds".
func (iv *RateInterval) text() string {
	seeds := fmt.Sprintf("%d seeds", iv.Seeds)
	if iv.Seeds == 1 {
		seeds = "1 seed"
	}
	s := fmt.Sprintf("90%% interval %s–%s: model σ %.3g%%, %s", fmtRate(iv.LoRPS), fmtRate(iv.HiRPS), 100*iv.Sigma, seeds)
	if iv.Sigma == 0 {
		s = fmt.Sprintf("interval %s–%s over %s", fmtRate(iv.LoRPS), fmtRate(iv.HiRPS), seeds)
	}
	return s + seedText(iv.SeedNoise, fmtRate)
}

// seedText states a seed noise, values by format: "; seed noise: mean
// 16.2, 95% CI 15.1–17.3, CV 2.7% over 3 seeds"; empty when there is none.
func seedText(e *noise.Estimate, format func(float64) string) string {
	if e == nil {
		return ""
	}
	cv := "CV unbounded"
	if e.CV != nil {
		cv = fmt.Sprintf("CV %.3g%%", 100**e.CV)
	}
	return fmt.Sprintf("; seed noise: mean %s, 95%% CI %s–%s, %s over %d seeds", format(e.Mean), format(e.CILo), format(e.CIHi), cv, e.N)
}

// BestInterval is the interval of a min-cost (or min-gpus) answer: the
// cheapest deployment meeting the SLO under each of the interval's runs,
// from the least to the most it may take. Unmet counts the runs under
// which no deployment of the grid meets the SLO: then more than the grid
// holds may be needed.
type BestInterval struct {
	LoCase        int      `json:"lo_case"` // −1: none
	LoGPUs        int      `json:"lo_gpus,omitempty"`
	LoCostPerHour *float64 `json:"lo_cost_per_hour_usd,omitempty"`
	HiCase        int      `json:"hi_case"` // −1: none
	HiGPUs        int      `json:"hi_gpus,omitempty"`
	HiCostPerHour *float64 `json:"hi_cost_per_hour_usd,omitempty"`
	Runs          int      `json:"runs"`
	Unmet         int      `json:"runs_unmet,omitempty"`
}

// bestInterval is the interval of the cheapest deployment meeting the SLO
// among rows (one load's), from their variant rows (ivRows of the same
// load) and the answer itself (best, nil when none meets).
func bestInterval(best *Row, ivRows []*Row, find string, primary func(*Row) (float64, bool)) *BestInterval {
	type pick struct{ r *Row }
	var picks []pick
	picks = append(picks, pick{best})
	groups := map[variantKey]*Row{}
	var order []variantKey
	for _, r := range ivRows {
		k := variantKey{r.Variant.Side, r.Variant.Seed}
		cur, seen := groups[k]
		if !seen {
			order = append(order, k)
		}
		if r.Met() && (cur == nil || cheaper(r, cur, find, primary)) {
			cur = r
		}
		groups[k] = cur
	}
	for _, k := range order {
		picks = append(picks, pick{groups[k]})
	}
	iv := &BestInterval{LoCase: -1, HiCase: -1, Runs: len(picks)}
	var lo, hi *Row
	for _, p := range picks {
		if p.r == nil {
			iv.Unmet++
			continue
		}
		if lo == nil || cheaper(p.r, lo, find, primary) {
			lo = p.r
		}
		if hi == nil || cheaper(hi, p.r, find, primary) {
			hi = p.r
		}
	}
	if lo != nil {
		iv.LoCase, iv.LoGPUs, iv.LoCostPerHour = lo.Case, lo.GPUs, lo.CostPerHour
		iv.HiCase, iv.HiGPUs, iv.HiCostPerHour = hi.Case, hi.GPUs, hi.CostPerHour
	}
	return iv
}

// text states the interval of a min-cost answer.
func (iv *BestInterval) text(sigma float64) string {
	what := fmt.Sprintf("interval over %d runs", iv.Runs)
	if sigma > 0 {
		what = fmt.Sprintf("90%% interval (model σ %.3g%%, %d runs)", 100*sigma, iv.Runs)
	}
	end := func(c, gpus int, cost *float64) string {
		s := fmt.Sprintf("case %d, %d GPUs", c, gpus)
		if cost != nil {
			s += fmt.Sprintf(", $%.2f/h", *cost)
		}
		return s
	}
	if iv.LoCase < 0 {
		return fmt.Sprintf("%s: no deployment of the grid meets it in any run", what)
	}
	s := fmt.Sprintf("%s: from %s to %s", what, end(iv.LoCase, iv.LoGPUs, iv.LoCostPerHour), end(iv.HiCase, iv.HiGPUs, iv.HiCostPerHour))
	if iv.LoCase == iv.HiCase {
		s = fmt.Sprintf("%s: the same deployment, case %d", what, iv.LoCase)
	}
	if iv.Unmet > 0 {
		s += fmt.Sprintf(", and in %d of %d runs none of the grid meets it: more may be needed", iv.Unmet, iv.Runs)
	}
	return s
}

// csvBandColumns are the CSV columns of a sweep with an interval, after
// csvColumns: each latency statistic's low and high end, and the runs.
func csvBandColumns() []string {
	var cols []string
	for _, m := range sloMetrics {
		for _, s := range sloStats {
			cols = append(cols, m+"_"+s+"_lo_ms", m+"_"+s+"_hi_ms")
		}
	}
	return append(cols, "interval_runs", "interval_unstable_runs")
}

// csvBand is a row's cells of csvBandColumns: empty where an end is
// absent (an unbounded high end, a row without a band).
func csvBand(b *Band) []string {
	num := func(v float64, ok bool) string {
		if !ok {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	var rec []string
	for _, m := range sloMetrics {
		for _, s := range sloStats {
			lo, hi, loOK, hiOK := b.Bounds(m, s)
			rec = append(rec, num(lo, loOK), num(hi, hiOK))
		}
	}
	if b == nil {
		return append(rec, "", "")
	}
	return append(rec, strconv.Itoa(b.Runs), strconv.Itoa(b.Unstable))
}

// SeedText states a knee's seed noise ("; seed noise: mean …"), empty
// without one.
func (k Knee) SeedText() string { return seedText(k.SeedNoise, fmtRate) }
