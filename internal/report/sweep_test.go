package report

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"servesim/internal/sweep"
)

// sweepDoc is a finished sweep of a toy deployment: n instances serve 10·n
// requests/s, with p99 TTFT 50 ms/(1 − load) below that and no steady
// state from there on.
func sweepDoc(t *testing.T, slo, find string, grid ...string) *sweep.Doc {
	t.Helper()
	s := sweep.NewSpec()
	for _, g := range grid {
		ax, err := sweep.ParseGridFlag(g)
		if err != nil {
			t.Fatal(err)
		}
		s.Axes = append(s.Axes, ax)
	}
	s.SLO, _ = sweep.ParseSLO(slo)
	s.SetFind(find)
	g, err := s.Check("rate")
	if err != nil {
		t.Fatal(err)
	}
	p := &sweep.Plan{Spec: s, Grid: g, ProbeRate: 1e6, Jobs: 2}
	rows, err := p.Run(context.Background(), func(_ context.Context, c sweep.Case, rate float64) (sweep.Row, error) {
		n, r := 1.0, rate
		for i, v := range c.Values {
			f, _ := v.Float()
			if g.Axes[i].Key == "n" {
				n = f
			} else if r == 0 {
				r = f
			}
		}
		row := sweep.Row{RateRPS: r, Status: sweep.StatusOK, GPU: "H100", GPUs: int(n), ThroughputRPS: min(r, 10*n), TokensPerSec: 100 * min(r, 10*n)}
		if rho := r / (10 * n); rho < 1 {
			row.TTFT = &sweep.Latency{P50: 20 / (1 - rho), P90: 40 / (1 - rho), P99: 50 / (1 - rho)}
			row.ITL = &sweep.Latency{P50: 8, P90: 9, P99: 10 + rho}
			row.E2E = &sweep.Latency{P50: 900, P90: 1500, P99: 2000 / (1 - rho)}
		} else {
			row.Status = sweep.StatusUnstable
		}
		row.GoodputRPS = row.ThroughputRPS
		return row, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d := &sweep.Doc{Command: "run sweep", Fingerprint: "f", Cases: g.Len(), Keys: g.Keys(), LoadKeys: []string{"rate"},
		Base: []sweep.Param{{Key: "model", Value: "qwen3-14b"}}, SLO: s.SLO.String(), Find: find, Rows: rows}
	if find == sweep.FindMaxRate {
		d.Precision = s.Precision
	}
	d.Finish(s.Prices)
	return d
}

func TestSweepText(t *testing.T) {
	d := sweepDoc(t, "ttft.p99<200ms", sweep.FindMinCost, "rate=15,25", "n=1..3")
	got := SweepText(d)
	for _, want := range []string{
		"run sweep: 6 cases (rate × n), 6 runs\nbase: model=qwen3-14b\nSLO: ttft.p99<200ms   find: min-cost\n",
		"case  n  rate  status    thr rps  goodput  attain  TTFT p50  TTFT p99  ITL p99  E2E p99  KV peak  preempt  GPUs    $/h  SLO\n",
		"   0  1    15  unstable     10.0     10.0    0.0%         -         -        -        -     0.0%        0     1   3.95  no: unstable\n",
		"   1  2    15  ok           15.0     15.0    0.0%   80.0 ms    200 ms  10.8 ms   8.00 s     0.0%        0     2   7.90  no: ttft.p99 200ms = 200ms\n",
		"cheapest deployment meeting ttft.p99<200ms at rate=15: rate=15 n=3: 3 × H100, $11.85/h, $2.194 per million output tokens; ttft.p99 100ms; 1 of 3 deployments meet the SLO\n",
		"no deployment of the grid meets ttft.p99<200ms at rate=25 (0 of 3); the closest, rate=25 n=3, has ttft.p99 300ms: widen the grid\n",
		"Pareto front of cost against ttft.p99 at rate=25: case 5 $11.85/h 300 ms\n",
		"price H100: $3.95 per GPU-hour (Modal",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the text lacks\n%q\n--- got\n%s", want, got)
		}
	}
}

func TestSweepHTML(t *testing.T) {
	for _, d := range []*sweep.Doc{
		sweepDoc(t, "ttft.p99<200ms,itl.p99<50ms", sweep.FindMinCost, "n=1,2", "rate=5..30:5"),
		sweepDoc(t, "ttft.p99<200ms", sweep.FindMaxRate, "n=1..3"),
	} {
		var b bytes.Buffer
		if err := WriteSweepHTML(&b, d); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if strings.Contains(page, "<script") || strings.Contains(page, "http://") && !strings.Contains(page, `xmlns="http://www.w3.org/2000/svg"`) {
			t.Error("the page must be self-contained: no scripts, nothing fetched")
		}
		for _, want := range []string{"<title>Capacity sweep: qwen3-14b</title>", `class="banner pass"`, "SLO ttft.p99&lt;200ms",
			`id="sweep-ttft-t"`, `id="sweep-goodput-t"`, `id="sweep-throughput-t"`, `id="sweep-pareto-t"`, ">knee<", "no steady state", "<h2>Runs</h2>"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %q", d.Find, want)
			}
		}
		ids := map[string]bool{}
		for _, m := range regexp.MustCompile(`<svg[^>]* aria-labelledby="([^ "]+)-t`).FindAllStringSubmatch(page, -1) {
			if ids[m[1]] {
				t.Errorf("%s: plot id %s twice", d.Find, m[1])
			}
			ids[m[1]] = true
		}
		if len(ids) != 6 {
			t.Errorf("%s: %d plots, want 6 (TTFT, ITL, E2E, goodput, throughput, cost)", d.Find, len(ids))
		}
		if n := strings.Count(page, "<svg"); n != strings.Count(page, "</svg>") {
			t.Errorf("%s: %d <svg> for %d </svg>", d.Find, n, strings.Count(page, "</svg>"))
		}
	}
	none := sweepDoc(t, "ttft.p99<1ms", sweep.FindMinCost, "n=1,2", "rate=5")
	var b bytes.Buffer
	WriteSweepHTML(&b, none)
	if !strings.Contains(b.String(), `class="banner fail">SLO ttft.p99&lt;1ms: not met by any case`) {
		t.Error("an SLO no case meets should show a failing banner")
	}
}
