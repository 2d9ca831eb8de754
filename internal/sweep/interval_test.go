package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// z is the 90% quantile the runner uses (deploy.IntervalZ, which this
// engine-free package does not import).
const z = 1.6448536269514722

// scaledQueue is queueModel with every step time × scale: the capacity of
// n instances is 10·n/scale. Its VariantFunc runs at 1 + side·z·sigma,
// times truth (the scale the "real" server has relative to the model).
func scaledQueue(g *Grid, truth, sigma float64) (RunFunc, VariantFunc) {
	base := queueModel(g)
	at := func(ctx context.Context, c Case, rate, scale float64) (Row, error) {
		// capacity/scale at rate r is capacity at rate r·scale.
		r := rate
		if r == 0 {
			for i, v := range c.Values {
				if g.Axes[i].Key == "rate" {
					r, _ = v.Float()
				}
			}
		}
		row, err := base(ctx, c, r*scale)
		row.RateRPS = r
		row.ThroughputRPS /= scale
		return row, err
	}
	run := func(ctx context.Context, c Case, rate float64) (Row, error) { return at(ctx, c, rate, truth) }
	vary := func(ctx context.Context, c Case, rate float64, v Variant) (Row, error) {
		if v.Sigma, v.Scale = 0, 1; v.Side != 0 {
			v.Sigma, v.Scale = sigma, 1+float64(v.Side)*z*sigma
		}
		row, err := at(ctx, c, rate, truth*v.Scale)
		row.Variant = &v
		return row, err
	}
	return run, vary
}

func runIntervalDoc(t *testing.T, p *Plan, truth, sigma float64, shard string) *Doc {
	t.Helper()
	run, vary := scaledQueue(p.Grid, truth, sigma)
	p.Vary = vary
	rows, ivRows, err := p.RunAll(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	d := &Doc{Command: "test", Fingerprint: "f", Shard: shard, Cases: p.Grid.Len(), Keys: p.Grid.Keys(),
		LoadKeys: []string{"rate"}, SLO: p.Spec.SLO.String(), Find: p.Spec.Find, Rows: rows, IntervalRows: ivRows}
	if p.Interval.On() {
		iv := p.Interval
		d.Interval = &iv
	}
	if p.Spec.Find == FindMaxRate {
		d.Precision = p.Spec.Precision
	}
	d.Finish(p.Spec.Prices)
	return d
}

// TestMaxRateIntervalBracketsTheTruth: the model's max rate is 9·n req/s
// (ttft.p99 < 500 ms); a server whose steps really take s times the
// model's serves 9·n/s. With σ = 8%, the 90% interval found from the
// model alone holds the true max rate of every server with s within
// 1 ± 1.645σ, and misses those well outside it.
func TestMaxRateIntervalBracketsTheTruth(t *testing.T) {
	const sigma = 0.08
	for _, s := range []float64{0.88, 0.95, 1, 1.06, 1.12} {
		p := plan(t, "ttft.p99<500ms", FindMaxRate, "n=1,3")
		truthDoc := runIntervalDoc(t, p, s, sigma, "")
		p = plan(t, "ttft.p99<500ms", FindMaxRate, "n=1,3")
		p.Interval = Interval{Model: true, Seeds: 1}
		d := runIntervalDoc(t, p, 1, sigma, "")
		for i, m := range d.Answer.MaxRates {
			truth := truthDoc.Answer.MaxRates[i].MaxRateRPS
			iv := m.Interval
			if iv == nil {
				t.Fatalf("case %d: no interval", i)
			}
			if !(iv.LoRPS <= truth && truth <= iv.HiRPS) {
				t.Errorf("true scale %v, case %d: interval [%v, %v] misses the true max rate %v", s, i, iv.LoRPS, iv.HiRPS, truth)
			}
			if !(iv.LoRPS <= m.MaxRateRPS && m.MaxRateRPS <= iv.HiRPS) || iv.Sigma != sigma || iv.Seeds != 1 {
				t.Errorf("case %d: interval %+v around %v", i, *iv, m.MaxRateRPS)
			}
			// The ends are the max rates at the scales 1 ± zσ, to the
			// search's precision.
			n := []float64{1, 3}[i]
			if lo := 9 * n / (1 + z*sigma); iv.LoRPS < lo*0.98 || iv.LoRPS > lo {
				t.Errorf("case %d: low end %v, want just under %v", i, iv.LoRPS, lo)
			}
		}
		if !strings.Contains(d.Answer.Verdict[0], "(90% interval 7.9") || !strings.Contains(d.Answer.Verdict[0], ": model σ 8%, 1 seed)") {
			t.Errorf("verdict %q", d.Answer.Verdict[0])
		}
	}
	for _, s := range []float64{0.7, 1.4} {
		p := plan(t, "ttft.p99<500ms", FindMaxRate, "n=1")
		truth := runIntervalDoc(t, p, s, sigma, "").Answer.MaxRates[0].MaxRateRPS
		p = plan(t, "ttft.p99<500ms", FindMaxRate, "n=1")
		p.Interval = Interval{Model: true, Seeds: 1}
		iv := runIntervalDoc(t, p, 1, sigma, "").Answer.MaxRates[0].Interval
		if iv.LoRPS <= truth && truth <= iv.HiRPS {
			t.Errorf("true scale %v, far outside σ: interval [%v, %v] holds %v", s, iv.LoRPS, iv.HiRPS, truth)
		}
	}
}

// TestGridBands: every row of a grid gets a band holding its own value,
// low end from the fast steps, high end from the slow ones (unbounded
// when a slow run has no steady state); CSV adds the columns only when
// the sweep has an interval, and the min-cost answer its range of
// deployments.
func TestGridBands(t *testing.T) {
	p := plan(t, "ttft.p99<500ms", FindMinCost, "n=1..4", "rate=8,25")
	p.Interval = Interval{Model: true, Seeds: 2}
	d := runIntervalDoc(t, p, 1, 0.08, "")
	if got, want := len(d.IntervalRows), 4*len(d.Rows); got != want {
		t.Fatalf("%d interval rows, want %d (2 seeds × 2 scales per row)", got, want)
	}
	for _, r := range d.Rows {
		b := r.Band
		if b == nil || b.Runs != 5 {
			t.Fatalf("case %d: band %+v, want 5 runs", r.Case, b)
		}
		lo, hi, loOK, hiOK := b.Bounds("ttft", "p99")
		if r.TTFT == nil {
			continue
		}
		if !loOK || lo >= r.TTFT.P99 {
			t.Errorf("case %d: low end %v, own %v", r.Case, lo, r.TTFT.P99)
		}
		if b.Unstable == 0 && (!hiOK || hi <= r.TTFT.P99) {
			t.Errorf("case %d: high end %v, own %v", r.Case, hi, r.TTFT.P99)
		}
		if b.Unstable > 0 && hiOK {
			t.Errorf("case %d: %d unstable runs but a high end %v", r.Case, b.Unstable, hi)
		}
	}
	// n=3 at 25 req/s: ρ = 0.83, p99 = 50/(1−ρ); at scale 1.1316, ρ = 0.943.
	for _, r := range d.Rows {
		if r.Param("n") == "3" && r.RateRPS == 25 {
			_, hi, _, _ := r.Band.Bounds("ttft", "p99")
			if want := 50 / (1 - 25*(1+z*0.08)/30); math.Abs(hi/want-1) > 1e-12 {
				t.Errorf("n=3 rate=25: high end %v, want %v", hi, want)
			}
		}
	}
	var csvOut bytes.Buffer
	if err := d.WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	header := strings.SplitN(csvOut.String(), "\n", 2)[0]
	if !strings.HasSuffix(header, ",reason,ttft_mean_lo_ms,ttft_mean_hi_ms,ttft_p50_lo_ms,ttft_p50_hi_ms,ttft_p90_lo_ms,ttft_p90_hi_ms,ttft_p95_lo_ms,ttft_p95_hi_ms,ttft_p99_lo_ms,ttft_p99_hi_ms,tpot_mean_lo_ms,tpot_mean_hi_ms,tpot_p50_lo_ms,tpot_p50_hi_ms,tpot_p90_lo_ms,tpot_p90_hi_ms,tpot_p95_lo_ms,tpot_p95_hi_ms,tpot_p99_lo_ms,tpot_p99_hi_ms,itl_mean_lo_ms,itl_mean_hi_ms,itl_p50_lo_ms,itl_p50_hi_ms,itl_p90_lo_ms,itl_p90_hi_ms,itl_p95_lo_ms,itl_p95_hi_ms,itl_p99_lo_ms,itl_p99_hi_ms,e2e_mean_lo_ms,e2e_mean_hi_ms,e2e_p50_lo_ms,e2e_p50_hi_ms,e2e_p90_lo_ms,e2e_p90_hi_ms,e2e_p95_lo_ms,e2e_p95_hi_ms,e2e_p99_lo_ms,e2e_p99_hi_ms,interval_runs,interval_unstable_runs") {
		t.Errorf("CSV header %q", header)
	}
	plain := runIntervalDoc(t, plan(t, "ttft.p99<500ms", FindMinCost, "n=1..4", "rate=8,25"), 1, 0.08, "")
	var plainCSV bytes.Buffer
	if err := plain.WriteCSV(&plainCSV); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plainCSV.String(), "_lo_ms") || plain.Rows[0].Band != nil || plain.Answer.Best[0].Interval != nil {
		t.Errorf("a sweep without an interval has interval columns or bands")
	}
	// At 25 req/s, 3 instances (ρ 0.83 < 0.9) meet the SLO; at the slow
	// scale they do not (ρ 0.94), 4 do; at the fast scale 3 still do.
	for _, b := range d.Answer.Best {
		if b.Load[0].Value != "25" {
			continue
		}
		iv := b.Interval
		if b.Case != 5 || iv == nil || iv.LoGPUs != 3 || iv.HiGPUs != 4 || iv.Unmet != 0 || iv.Runs != 5 {
			t.Errorf("min cost at 25 req/s: case %d, interval %+v; want 3 GPUs, from 3 to 4", b.Case, iv)
		}
	}
	if v := d.Answer.Verdict[1]; !strings.Contains(v, "90% interval (model σ 8%, 5 runs): from case 5, 3 GPUs, $11.85/h to case 7, 4 GPUs, $15.80/h") {
		t.Errorf("verdict %q", v)
	}
}

// TestIntervalMerge: shards of a sweep with an interval merge into the
// document the whole sweep gives, bands and intervals included.
func TestIntervalMerge(t *testing.T) {
	for _, find := range []string{FindMaxRate, FindMinCost} {
		grid := []string{"n=1..4"}
		if find == FindMinCost {
			grid = append(grid, "rate=5,25")
		}
		whole := plan(t, "ttft.p99<500ms", find, grid...)
		whole.Interval = Interval{Model: true, Seeds: 1}
		ref := runIntervalDoc(t, whole, 1, 0.08, "")
		var names []string
		var docs []*Doc
		for i := range 2 {
			p := plan(t, "ttft.p99<500ms", find, grid...)
			p.Interval = whole.Interval
			p.Owns = func(k int64) bool { return k%2 == int64(i) }
			d := runIntervalDoc(t, p, 1, 0.08, strconv.Itoa(i)+"/2")
			var buf bytes.Buffer
			if err := d.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := DecodeDoc("s", buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			names, docs = append(names, strconv.Itoa(i)), append(docs, back)
		}
		got, err := Merge(names, docs)
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		if err := got.WriteJSON(&a); err != nil {
			t.Fatal(err)
		}
		if err := ref.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Errorf("%s: merged shards differ from the whole sweep", find)
		}
		docs[1].Interval = &Interval{Model: true, Seeds: 3}
		if _, err := Merge(names, docs); err == nil || !strings.Contains(err.Error(), "interval") {
			t.Errorf("%s: shards of different intervals merged: %v", find, err)
		}
	}
}

// TestSeedsOnly: --seeds without --interval runs the further seeds at the
// model as it is, and the verdict says the interval is the seeds'.
func TestSeedsOnly(t *testing.T) {
	if got := (Interval{Seeds: 3}).Variants(); !reflect.DeepEqual(got, []Variant{{Seed: 1}, {Seed: 2}}) {
		t.Errorf("variants %+v", got)
	}
	if (Interval{Seeds: 1}).On() {
		t.Errorf("one seed and no model: an interval")
	}
	p := plan(t, "ttft.p99<500ms", FindMaxRate, "n=1")
	p.Interval = Interval{Seeds: 2}
	d := runIntervalDoc(t, p, 1, 0.08, "")
	if v := d.Answer.Verdict[0]; !strings.Contains(v, "(interval 8.998–8.998 over 2 seeds; seed noise: mean 8.998, 95% CI 8.998–8.998, CV 0% over 2 seeds)") {
		t.Errorf("verdict %q", v)
	}
}

// TestSeedNoiseOfMaxRate: seeds whose servers differ (seed s's steps take
// 1 + 0.05·s of the model's: max rates about 9, 9/1.05, 9/1.1 req/s) give
// the max rate a seed noise: the mean of the three, its 95% interval by
// Student's t with 2 degrees of freedom and its CV, in the verdict and in
// the JSON; with the model's σ too, each seed's value is the harmonic
// mean of its two scales' (the plain mean sits (zσ)² = 1.7% high here).
func TestSeedNoiseOfMaxRate(t *testing.T) {
	for _, model := range []bool{false, true} {
		p := plan(t, "ttft.p99<500ms", FindMaxRate, "n=1")
		p.Interval = Interval{Model: model, Seeds: 3}
		run, vary := scaledQueue(p.Grid, 1, 0.08)
		p.Vary = func(ctx context.Context, c Case, rate float64, v Variant) (Row, error) {
			slower := 1 + 0.05*float64(v.Seed)
			row, err := vary(ctx, c, rate*slower, v)
			row.RateRPS = rate
			return row, err
		}
		rows, ivRows, err := p.RunAll(context.Background(), run)
		if err != nil {
			t.Fatal(err)
		}
		d := &Doc{Command: "test", Fingerprint: "f", Cases: 1, Keys: p.Grid.Keys(), LoadKeys: []string{"rate"}, SLO: p.Spec.SLO.String(),
			Find: FindMaxRate, Precision: p.Spec.Precision, Rows: rows, IntervalRows: ivRows, Interval: &p.Interval}
		d.Finish(p.Spec.Prices)
		iv := d.Answer.MaxRates[0].Interval
		if iv == nil || iv.SeedNoise == nil {
			t.Fatalf("model %v: no seed noise: %+v", model, iv)
		}
		e := iv.SeedNoise
		want := (9 + 9/1.05 + 9/1.1) / 3
		if e.N != 3 || math.Abs(e.Mean-want) > 0.01*want || e.SD <= 0 || e.CV == nil || math.Abs(*e.CV-e.SD/e.Mean) > 1e-12 ||
			math.Abs(e.HalfWidth()-4.302653*e.SD/math.Sqrt(3)) > 1e-6 {
			t.Errorf("model %v: seed noise %+v, want 3 seeds, mean about %.3f, CI mean ± 4.3027·SD/√3", model, e, want)
		}
		if v := d.Answer.Verdict[0]; !strings.Contains(v, "seed noise: mean "+fmtRate(e.Mean)+", 95% CI "+fmtRate(e.CILo)+"–"+fmtRate(e.CIHi)) {
			t.Errorf("model %v: verdict %q does not state the seed noise", model, v)
		}
		var buf bytes.Buffer
		if err := d.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"seed_noise": {`) || !strings.Contains(buf.String(), `"ci95_lo": `) {
			t.Errorf("model %v: the JSON has no seed_noise", model)
		}
	}
}

// TestIntervalNeedsAVaryingRunner: an interval with a runner that cannot
// vary is an error before any run.
func TestIntervalNeedsAVaryingRunner(t *testing.T) {
	p := plan(t, "ttft.p99<500ms", FindMaxRate, "n=1")
	p.Interval = Interval{Model: true, Seeds: 1}
	if _, _, err := p.RunAll(context.Background(), queueModel(p.Grid)); err == nil {
		t.Errorf("no error")
	}
}

// TestIntervalDocChecks: a document whose interval rows have no variant,
// a variant the interval has not, or no interval at all is refused at
// decoding, never analysed.
func TestIntervalDocChecks(t *testing.T) {
	p := plan(t, "ttft.p99<500ms", FindMinCost, "n=1,2", "rate=8")
	p.Interval = Interval{Model: true, Seeds: 1}
	d := runIntervalDoc(t, p, 1, 0.08, "")
	var buf bytes.Buffer
	if err := d.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if _, err := DecodeDoc("d.json", []byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, want string }{
		{`"seed": 0,`, `"seed": 4,`, "is not one of the interval's"},
		{`"step_time_sigma": 0.08,`, `"step_time_sigma": 0.9,`, "is not a run's"},
		{`"model": true`, `"model": false`, "not an interval"},
		{`"variant": {`, `"variant_x": {`, "variant_x"},
	} {
		bad := strings.Replace(good, c.from, c.to, 1)
		if bad == good {
			t.Fatalf("%q not in the document", c.from)
		}
		if _, err := DecodeDoc("d.json", []byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.from, c.to, err, c.want)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(good), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["interval_rows"].([]any)[0].(map[string]any), "variant")
	b, _ := json.Marshal(doc)
	if _, err := DecodeDoc("d.json", b); err == nil || !strings.Contains(err.Error(), "has no variant") {
		t.Errorf("a row without its variant: %v", err)
	}
	delete(doc, "interval")
	b, _ = json.Marshal(doc)
	if _, err := DecodeDoc("d.json", b); err == nil || !strings.Contains(err.Error(), "asks for none") {
		t.Errorf("rows without an interval: %v", err)
	}
}

// TestSeedNoiseOfKnee: a grid of rates whose seeds' servers differ (seed
// s's steps take 1 + 0.3·s of the model's) bends at different rates; the
// knee states the mean, interval and CV of the seeds' knees (each seed's
// knee its own curve's) in the JSON and through SeedText.
func TestSeedNoiseOfKnee(t *testing.T) {
	p := plan(t, "", "", "rate=1,2,3,4,5,6,7,8,9,10,11,12")
	p.Interval = Interval{Seeds: 3}
	run, vary := scaledQueue(p.Grid, 1, 0.08)
	p.Vary = func(ctx context.Context, c Case, rate float64, v Variant) (Row, error) {
		r, _ := c.Values[0].Float()
		row, err := vary(ctx, c, r*(1+0.3*float64(v.Seed)), v)
		row.RateRPS = r
		return row, err
	}
	rows, ivRows, err := p.RunAll(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	d := &Doc{Command: "test", Fingerprint: "f", Cases: p.Grid.Len(), Keys: p.Grid.Keys(), LoadKeys: []string{"rate"},
		Rows: rows, IntervalRows: ivRows, Interval: &p.Interval}
	d.Finish(p.Spec.Prices)
	if len(d.Answer.Knees) != 1 {
		t.Fatalf("knees %+v, want one", d.Answer.Knees)
	}
	k := d.Answer.Knees[0]
	primary := func(r *Row) (float64, bool) { return r.Latency("ttft", "p99") }
	knees := []float64{k.RateRPS}
	for _, g := range byVariant(d.IntervalRows) {
		ks, _ := kneesOf(g, "", primary)
		if len(ks) != 1 {
			t.Fatalf("seed %d: knees %+v, want one", g[0].Variant.Seed, ks)
		}
		knees = append(knees, ks[0].RateRPS)
	}
	want := (knees[0] + knees[1] + knees[2]) / 3
	e := k.SeedNoise
	if e == nil || e.N != 3 || math.Abs(e.Mean-want) > 1e-12 || math.Abs(e.HalfWidth()-4.302653*e.SD/math.Sqrt(3)) > 1e-6 {
		t.Fatalf("knee seed noise %+v, want 3 seeds of mean %g (knees %v)", e, want, knees)
	}
	if knees[0] == knees[2] {
		t.Errorf("the seeds' knees %v do not differ: the test shows nothing", knees)
	}
	if !strings.Contains(k.SeedText(), "seed noise: mean "+fmtRate(want)) {
		t.Errorf("SeedText %q", k.SeedText())
	}
}

// TestSeedNoiseHarmonic: a seed's rate is the harmonic mean of its two
// scales' (rates 10 and 15 give 12, the rate of the scales 1 ∓ 0.2 at
// 12 req/s), and a seed that found no rate at one scale is left out.
func TestSeedNoiseHarmonic(t *testing.T) {
	e := seedNoise(map[int][]float64{0: {10, 15}, 1: {0, 14}, 2: {12, 12}}, 3)
	if e == nil || e.N != 2 || math.Abs(e.Mean-12) > 1e-12 || e.SD > 1e-12 {
		t.Errorf("seed noise %+v, want seeds 0 and 2 at 12 req/s each", e)
	}
	if e := seedNoise(map[int][]float64{0: {10, 15}, 1: {0, 14}}, 2); e != nil {
		t.Errorf("one seed left gave a seed noise: %+v", e)
	}
}
