package sweep

import (
	"context"
	"strings"
	"testing"
)

// shedModel is a RunFunc standing in for a gateway at overload: a refill
// r (the grid key "refill", in requests/s) lets min(r, rate) requests in
// and rejects the rest; the p99 TTFT of what gets in is 50 ms/(1 − ρ) on a
// capacity of 10 requests/s, unstable from ρ = 1.
func shedModel(g *Grid) RunFunc {
	return func(_ context.Context, c Case, rate float64) (Row, error) {
		refill, r := 0.0, rate
		for i, v := range c.Values {
			f, _ := v.Float()
			switch g.Axes[i].Key {
			case "refill":
				refill = f
			case "rate":
				if r == 0 {
					r = f
				}
			}
		}
		admitted := min(refill, r)
		const injected = 1000
		rejected := int64(injected * (1 - admitted/r))
		row := Row{RateRPS: r, Status: StatusOK, Injected: injected, Completed: injected - rejected, Failed: rejected,
			Rejected: rejected, GPU: "H100", GPUs: 1, ThroughputRPS: admitted, GoodputRPS: admitted}
		if rho := admitted / 10; rho < 1 {
			row.TTFT = &Latency{P50: 20 / (1 - rho), P99: 50 / (1 - rho)}
		} else {
			row.Status = StatusUnstable
		}
		return row, nil
	}
}

// TestMinShed: at twice the capacity, the setting that meets the SLO while
// rejecting the fewest requests: the largest refill whose admitted load
// keeps the p99 TTFT under the bound.
func TestMinShed(t *testing.T) {
	p := plan(t, "ttft.p99<200ms", FindMinShed, "rate=20", "refill=2,5,7,9,12")
	rows, err := p.Run(context.Background(), shedModel(p.Grid))
	if err != nil {
		t.Fatal(err)
	}
	d := &Doc{Command: "test", Fingerprint: "f", Cases: p.Grid.Len(), Keys: p.Grid.Keys(),
		LoadKeys: []string{"rate"}, SLO: p.Spec.SLO.String(), Find: p.Spec.Find, Rows: rows}
	d.Finish(p.Spec.Prices)
	// refill 7: ρ = 0.7, p99 167 ms, 650 of 1000 rejected; 9 gives 500 ms.
	if len(d.Answer.Best) != 1 {
		t.Fatalf("got %d answers, want 1", len(d.Answer.Best))
	}
	b := d.Answer.Best[0]
	if b.Case != 2 || b.Rejected != 650 || b.Injected != 1000 || b.Met != 3 {
		t.Errorf("best %+v, want case 2 (refill=7) with 650 of 1000 rejected, 3 cases meeting the SLO", b)
	}
	if want := "least shedding deployment meeting ttft.p99<200ms at rate=20: rate=20 refill=7: 1 × H100, 650 rejected and 650 failed of 1000 requests"; !strings.HasPrefix(d.Answer.Verdict[0], want) {
		t.Errorf("verdict %q, want it to start %q", d.Answer.Verdict[0], want)
	}
}

// min-shed ranks by rejected requests, then failed ones, then cost.
func TestCheaperMinShed(t *testing.T) {
	price := func(v float64) *float64 { return &v }
	primary := func(r *Row) (float64, bool) { return r.Latency("ttft", "p99") }
	few := &Row{Case: 0, Rejected: 10, Failed: 30, CostPerHour: price(9)}
	many := &Row{Case: 1, Rejected: 20, Failed: 20, CostPerHour: price(1)}
	sameFewerFailed := &Row{Case: 2, Rejected: 10, Failed: 12, CostPerHour: price(9)}
	if !cheaper(few, many, FindMinShed, primary) || cheaper(many, few, FindMinShed, primary) {
		t.Error("min-shed: fewer rejected win whatever they cost")
	}
	if !cheaper(sameFewerFailed, few, FindMinShed, primary) {
		t.Error("min-shed: at equal rejections, fewer failed win")
	}
}
