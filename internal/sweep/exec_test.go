package sweep

import (
	"bytes"
	"context"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// queueModel is a RunFunc standing in for a simulator: a deployment of n
// instances serves 10·n requests/s; at load ρ = rate/capacity < 1 its p99
// TTFT is 50 ms/(1 − ρ), and from ρ = 1 on it has no steady state.
func queueModel(g *Grid) RunFunc {
	return func(_ context.Context, c Case, rate float64) (Row, error) {
		n, r := 1.0, rate
		for i, v := range c.Values {
			f, _ := v.Float()
			switch g.Axes[i].Key {
			case "n":
				n = f
			case "rate":
				if r == 0 {
					r = f
				}
			}
		}
		capacity := 10 * n
		row := Row{RateRPS: r, Status: StatusOK, Injected: 1000, Completed: 1000, GPU: "H100", GPUs: int(n),
			ThroughputRPS: math.Min(r, capacity), GoodputRPS: math.Min(r, capacity)}
		row.TokensPerSec = row.ThroughputRPS * 100
		if rho := r / capacity; rho < 1 {
			row.TTFT = &Latency{P50: 20 / (1 - rho), P99: 50 / (1 - rho)}
			row.ITL = &Latency{P99: 10}
		} else {
			row.Status = StatusUnstable
		}
		return row, nil
	}
}

func plan(t *testing.T, slo, find string, grid ...string) *Plan {
	t.Helper()
	s := NewSpec()
	for _, g := range grid {
		ax, err := ParseGridFlag(g)
		if err != nil {
			t.Fatal(err)
		}
		s.Axes = append(s.Axes, ax)
	}
	s.SLO, _ = ParseSLO(slo)
	s.SetFind(find)
	g, err := s.Check("rate")
	if err != nil {
		t.Fatal(err)
	}
	return &Plan{Spec: s, Grid: g, ProbeRate: 1e6}
}

func runDoc(t *testing.T, p *Plan, shard string) *Doc {
	t.Helper()
	rows, err := p.Run(context.Background(), queueModel(p.Grid))
	if err != nil {
		t.Fatal(err)
	}
	d := &Doc{Command: "test", Fingerprint: "f", Shard: shard, Cases: p.Grid.Len(), Keys: p.Grid.Keys(),
		LoadKeys: []string{"rate"}, SLO: p.Spec.SLO.String(), Find: p.Spec.Find, Rows: rows}
	if p.Spec.Find == FindMaxRate {
		d.Precision = p.Spec.Precision
	}
	d.Finish(p.Spec.Prices)
	return d
}

// The search lands within its precision of the true max rate, which is
// 9·n requests/s for ttft.p99 < 500 ms; the rate found meets the SLO and
// the next one tried, within the precision above it, fails.
func TestMaxRateSearch(t *testing.T) {
	for _, prec := range []float64{0.01, 0.001} {
		p := plan(t, "ttft.p99<500ms", FindMaxRate, "n=1,3,7")
		p.Spec.Precision = prec
		d := runDoc(t, p, "")
		if len(d.Answer.MaxRates) != 3 {
			t.Fatalf("got %d max rates, want 3", len(d.Answer.MaxRates))
		}
		for i, m := range d.Answer.MaxRates {
			truth := 9 * []float64{1, 3, 7}[i]
			if !(m.MaxRateRPS < truth && m.FailRateRPS >= truth) {
				t.Errorf("precision %v case %d: bracket [%v, %v] misses the true %v", prec, i, m.MaxRateRPS, m.FailRateRPS, truth)
			}
			if m.FailRateRPS/m.MaxRateRPS-1 > prec*1.001 {
				t.Errorf("precision %v case %d: bracket [%v, %v] wider than the precision", prec, i, m.MaxRateRPS, m.FailRateRPS)
			}
			if m.CostPerHour == nil || *m.CostPerHour != 3.95*[]float64{1, 3, 7}[i] {
				t.Errorf("case %d: cost %v", i, m.CostPerHour)
			}
		}
		if !d.Answer.Met || len(d.Answer.Knees) != 3 {
			t.Errorf("met %v, %d knees; want met and a knee per curve", d.Answer.Met, len(d.Answer.Knees))
		}
		if len(d.Answer.Pareto) != 1 || len(d.Answer.Pareto[0].Points) != 3 {
			t.Errorf("every deployment buys more rate for more money: got %+v", d.Answer.Pareto)
		}
	}
}

// Rows never depend on how many cases ran at once, nor on the shard that
// ran them: merged shards print exactly what one run prints.
func TestDeterministicAndMerge(t *testing.T) {
	for _, find := range []string{FindMaxRate, FindMinCost} {
		grid := []string{"n=1..5"}
		if find == FindMinCost {
			grid = append(grid, "rate=5..45:10")
		}
		whole := plan(t, "ttft.p99<500ms", find, grid...)
		whole.Jobs = 1
		ref := runDoc(t, whole, "")
		many := plan(t, "ttft.p99<500ms", find, grid...)
		many.Jobs = 4
		if got := runDoc(t, many, ""); !reflect.DeepEqual(got, ref) {
			t.Errorf("%s: rows differ between 1 and 4 jobs", find)
		}
		var names []string
		var docs []*Doc
		for i := 2; i >= 0; i-- { // shards in any order
			p := plan(t, "ttft.p99<500ms", find, grid...)
			p.Owns = func(k int64) bool { return k%3 == int64(i) }
			d := runDoc(t, p, strconv.Itoa(i)+"/3")
			if d.Answer != nil {
				t.Fatal("a shard's document has no answer")
			}
			var buf bytes.Buffer
			if err := d.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := DecodeDoc("s", buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			names, docs = append(names, "shard-"+strconv.Itoa(i)), append(docs, back)
		}
		merged, err := Merge(names, docs)
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		ref.WriteJSON(&a)
		merged.WriteJSON(&b)
		if a.String() != b.String() {
			t.Errorf("%s: merged shards differ from the whole run:\n%s\n---\n%s", find, b.String(), a.String())
		}
		a.Reset()
		b.Reset()
		ref.WriteCSV(&a)
		merged.WriteCSV(&b)
		if a.String() != b.String() {
			t.Errorf("%s: merged CSV differs", find)
		}
	}
}

func TestMergeErrors(t *testing.T) {
	mk := func(shard string, own func(int64) bool) *Doc {
		p := plan(t, "", "", "n=1..4")
		p.Owns = own
		return runDoc(t, p, shard)
	}
	s0 := mk("0/2", func(k int64) bool { return k%2 == 0 })
	s1 := mk("1/2", func(k int64) bool { return k%2 == 1 })
	other := mk("1/2", func(k int64) bool { return k%2 == 1 })
	other.Fingerprint = "g"
	for _, tc := range []struct {
		names []string
		docs  []*Doc
		want  string
	}{
		{[]string{"a"}, []*Doc{s0}, "shards missing: 1/2"},
		{[]string{"a", "b"}, []*Doc{s0, s0}, "b: shard: shard 0/2 is also a"},
		{[]string{"a", "b"}, []*Doc{s0, other}, `b: fingerprint: "g" here, "` + s0.Fingerprint + `" in a: shards of one sweep differ`},
		{[]string{"a", "b"}, []*Doc{s0, mk("1/3", func(k int64) bool { return k%3 == 1 })}, "b: shard: 1/3 is one of 3 shards, a one of 2"},
		{nil, nil, "nothing to merge"},
	} {
		if _, err := Merge(tc.names, tc.docs); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want prefix %q", err, tc.want)
		}
	}
	if _, err := DecodeDoc("x.json", []byte(`{"format":"other"}`)); err == nil || err.Error() != `x.json:1:11: format: "other": want "servesim-sweep/1" (the JSON a sweep writes with --format json)` {
		t.Errorf("foreign document: got %v", err)
	}
	if _, err := DecodeDoc("x.csv", []byte("case,role\n")); err == nil || !strings.HasPrefix(err.Error(), "x.csv:1:1: not a sweep document") {
		t.Errorf("CSV given to merge: got %v", err)
	}
	if d, err := Merge([]string{"a", "b"}, []*Doc{s1, s0}); err != nil || len(d.Rows) != 4 || d.Rows[0].Case != 0 {
		t.Errorf("shards in any order: %v", err)
	}
}

// The cheapest deployment meeting the SLO at each load, and a clear
// answer (exit code 3) when none does.
func TestMinCost(t *testing.T) {
	d := runDoc(t, plan(t, "ttft.p99<200ms", FindMinCost, "rate=20,35", "n=1..5"), "")
	if len(d.Answer.Best) != 2 {
		t.Fatalf("got %d answers, want one per rate", len(d.Answer.Best))
	}
	// rate 20: n = 3 gives ρ = 2/3, p99 150 ms; n = 2 is saturated.
	// rate 35: n = 5 gives ρ = 0.7, p99 167 ms; n = 4 gives 400 ms.
	for i, want := range []int{3, 5} {
		b := d.Answer.Best[i]
		if b.GPUs != want || b.CostPerHour == nil || math.Abs(*b.CostPerHour-3.95*float64(want)) > 1e-9 {
			t.Errorf("rate %s: best %d GPUs at %v, want %d", b.Load[0].Value, b.GPUs, b.CostPerHour, want)
		}
	}
	if err := d.NotMet(); err != nil {
		t.Errorf("not met: %v", err)
	}
	d = runDoc(t, plan(t, "ttft.p99<40ms", FindMinCost, "rate=20", "n=1..3"), "")
	err := d.NotMet()
	var nm *NotMetError
	if !errors.As(err, &nm) || nm.ExitCode() != 3 || !strings.Contains(err.Error(), "no deployment of the grid meets ttft.p99<40ms at rate=20 (0 of 3); the closest, rate=20 n=3, has ttft.p99 150ms: widen the grid") {
		t.Errorf("impossible SLO: got %v", err)
	}
	d = runDoc(t, plan(t, "ttft.p99<40ms", FindMaxRate, "n=1"), "")
	if err := d.NotMet(); err == nil || !strings.Contains(err.Error(), "n=1: no rate meets the SLO") {
		t.Errorf("impossible SLO for a search: got %v", err)
	}
}

// min-gpus ranks by GPUs first, min-cost by cost first.
func TestCheaper(t *testing.T) {
	price := func(v float64) *float64 { return &v }
	primary := func(r *Row) (float64, bool) { return r.Latency("ttft", "p99") }
	few := &Row{Case: 0, GPUs: 2, CostPerHour: price(8), TTFT: &Latency{P99: 100}}    // 2 dear GPUs
	many := &Row{Case: 1, GPUs: 4, CostPerHour: price(7.8), TTFT: &Latency{P99: 100}} // 4 cheap ones
	unpriced := &Row{Case: 2, GPUs: 1, TTFT: &Latency{P99: 100}}                      // no price
	if !cheaper(many, few, FindMinCost, primary) || cheaper(few, many, FindMinCost, primary) {
		t.Error("min-cost: 4 GPUs at $7.80/h beat 2 at $8/h")
	}
	if !cheaper(few, many, FindMinGPUs, primary) || !cheaper(unpriced, few, FindMinGPUs, primary) {
		t.Error("min-gpus: fewer GPUs win whatever they cost")
	}
	if cheaper(unpriced, many, FindMinCost, primary) {
		t.Error("min-cost: a deployment without a price never beats a priced one")
	}
}

func TestKneedleAndFrontier(t *testing.T) {
	// y = 1/(1−x) on x = 0.1 … 0.9: the bend is where the slope passes
	// that of the chord, at x ≈ 0.64; the grid point nearest is 0.6 or 0.7.
	var x, y []float64
	for i := 1; i <= 9; i++ {
		x = append(x, float64(i)/10)
		y = append(y, 1/(1-float64(i)/10))
	}
	i, ok := kneedle(x, y)
	if !ok || (x[i] != 0.6 && x[i] != 0.7) {
		t.Errorf("knee at %v (ok %v), want 0.6 or 0.7", x[i], ok)
	}
	if _, ok := kneedle([]float64{1, 2, 3}, []float64{1, 2, 3}); ok {
		t.Error("a straight line has no knee")
	}
	pts := []ParetoPoint{{Case: 0, CostPerHour: 4, Value: 100}, {Case: 1, CostPerHour: 4, Value: 90}, {Case: 2, CostPerHour: 8, Value: 95},
		{Case: 3, CostPerHour: 8, Value: 50}, {Case: 4, CostPerHour: 12, Value: 50}}
	var got []int
	for _, p := range frontier(pts, false) {
		got = append(got, p.Case)
	}
	if !reflect.DeepEqual(got, []int{1, 3}) {
		t.Errorf("front: got cases %v, want [1 3]", got)
	}
}

func TestPrices(t *testing.T) {
	p, err := DecodePrices("p.yaml", []byte("h100: 2.49\nMI300X: 3\n"), DefaultPrices())
	if err != nil {
		t.Fatal(err)
	}
	if x, _ := p.Lookup("H100"); x.USDPerHour != 2.49 {
		t.Errorf("H100: %+v", x)
	}
	if _, ok := p.Lookup("mi300x"); !ok {
		t.Error("MI300X not added")
	}
	for _, tc := range []struct{ src, want string }{
		{"- 1\n", "p.yaml:1:1: prices: want a map"},
		{"H100: 1\nh100: 2\n", "p.yaml:2:1: prices: GPU h100 is priced twice"},
		{"H100: [1]\n", "p.yaml:1:7: prices.H100"},
		{"", "p.yaml: prices: the file is empty"},
		{"H100: 1e308\n", "p.yaml:1:7: prices.H100: 1e+308 USD per GPU-hour: want a finite price in [0, 1e+06]"},
		{"H100: .inf\n", "p.yaml:1:7: prices.H100: \".inf\" is not a number"},
		{"H100: 2\n---\nH100: 3\n", "p.yaml:2:1: more than one YAML document"},
	} {
		if _, err := DecodePrices("p.yaml", []byte(tc.src), DefaultPrices()); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want prefix %q", tc.src, err, tc.want)
		}
	}
	r := Row{Status: StatusOK, GPU: "l40s", GPUs: 4, TokensPerSec: 1000}
	r.finish(SLO{}, DefaultPrices())
	if r.CostPerHour == nil || *r.CostPerHour != 4*1.95 || r.CostPerMTok == nil || math.Abs(*r.CostPerMTok-4*1.95/3.6) > 1e-12 {
		t.Errorf("costs: %v %v, want 7.8 $/h and 7.8/3.6 $ per million tokens", r.CostPerHour, r.CostPerMTok)
	}
	r = Row{Status: StatusOK, GPU: "H100", GPUs: 1 << 62, TokensPerSec: 1e-300}
	if r.finish(SLO{}, DefaultPrices()); r.CostPerHour == nil || r.CostPerMTok != nil {
		t.Errorf("a cost per token that is not a finite number is left out: %v %v", r.CostPerHour, r.CostPerMTok)
	}
	r = Row{Status: StatusOK, GPU: "TPU", GPUs: 4}
	if r.finish(SLO{}, DefaultPrices()); r.CostPerHour != nil {
		t.Error("a GPU without a price has no cost")
	}
}
