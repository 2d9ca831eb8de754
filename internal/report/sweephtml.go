package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"servesim/internal/sweep"
)

// curve is the rows of one deployment at several rates, by rate.
type curve struct {
	name string
	rows []*sweep.Row
}

// sweepCurves groups the rows that share every parameter but the rate (a
// max-rate search: the rows of one case), leaving out the probes.
func sweepCurves(d *sweep.Doc) []curve {
	var out []curve
	index := map[string]int{}
	for i := range d.Rows {
		r := &d.Rows[i]
		if r.Role == sweep.RoleProbe || r.RateRPS <= 0 || r.Status == sweep.StatusInfeasible {
			continue
		}
		var ps []sweep.Param
		for _, p := range r.Params {
			if p.Key != "rate" {
				ps = append(ps, p)
			}
		}
		name := sweep.ParamText(ps)
		key := name
		if d.Find == sweep.FindMaxRate {
			key = fmt.Sprint(r.Case)
		}
		j, ok := index[key]
		if !ok {
			j = len(out)
			index[key] = j
			out = append(out, curve{name: name})
		}
		out[j].rows = append(out[j].rows, r)
	}
	for _, c := range out {
		sort.SliceStable(c.rows, func(i, j int) bool { return c.rows[i].RateRPS < c.rows[j].RateRPS })
	}
	return out
}

// WriteSweepHTML writes one self-contained page of a sweep (inline CSS and
// SVG, no scripts, nothing fetched), in the look of the calibration
// report: the answer, latency percentiles and goodput against rate with
// the SLO and the knees marked, throughput against rate, the Pareto front
// of cost against latency, and every row.
func WriteSweepHTML(w io.Writer, d *sweep.Doc) error {
	var b strings.Builder
	title := "Capacity sweep"
	for _, p := range d.Base {
		if p.Key == "model" {
			title += ": " + p.Value
		}
	}
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", esc(title), pageCSS)
	fmt.Fprintf(&b, "<h1>%s</h1>\n<p>%s</p>\n", esc(title), esc(sweepHeadline(d)))
	if len(d.Base) > 0 {
		fmt.Fprintf(&b, "<p class=\"muted\">base: %s</p>\n", esc(sweep.ParamText(d.Base)))
	}
	if a := d.Answer; a != nil && d.SLO != "" {
		cls, verdict := "pass", "SLO "+d.SLO+": met"
		if !a.Met {
			cls, verdict = "fail", "SLO "+d.SLO+": not met by any case"
		}
		fmt.Fprintf(&b, "<div class=\"banner %s\">%s</div>\n", cls, esc(verdict))
	}
	if a := d.Answer; a != nil && len(a.Verdict) > 0 {
		b.WriteString("<h2>Answer</h2>\n<ul>\n")
		for _, v := range a.Verdict {
			fmt.Fprintf(&b, "<li>%s</li>\n", esc(v))
		}
		for _, k := range a.Knees {
			fmt.Fprintf(&b, "<li>knee of %s: %s req/s (%s)%s</li>\n", esc(a.Primary), fmtRate(k.RateRPS), fmtDur(k.LatencyMs*1e3), esc(curveName(k.Curve)))
		}
		b.WriteString("</ul>\n")
	}
	if d.Shard != "" {
		fmt.Fprintf(&b, "<p class=\"muted\">shard %s: merge every shard's JSON with <code>sweep merge</code> for the answer.</p>\n", esc(d.Shard))
	}
	sweepPlots(&b, d)
	b.WriteString("<h2>Runs</h2>\n")
	header, right := sweepColumns(d)
	rows := make([][]string, len(d.Rows))
	for i := range d.Rows {
		rows[i] = sweepCells(d, &d.Rows[i])
	}
	htmlTable(&b, header, rows, right, false)
	b.WriteString("<p class=\"muted\">A run whose queue grew until its end reached no steady state: it is marked unstable and its latencies are not reported. Goodput counts the requests meeting the SLO's bounds per request.</p>\n")
	if len(d.Prices) > 0 {
		b.WriteString("<h2>Prices</h2>\n<ul>\n")
		for _, p := range d.Prices {
			fmt.Fprintf(&b, "<li>%s: $%.2f per GPU-hour (%s)</li>\n", esc(p.GPU), p.USDPerHour, esc(p.Source))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</body>\n</html>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write sweep html: %w", err)
	}
	return nil
}

// sweepPlots draws the plots the rows allow: curves against rate need a
// curve with two rates or more; the Pareto plot needs priced rows.
func sweepPlots(b *strings.Builder, d *sweep.Doc) {
	curves := sweepCurves(d)
	long := false
	for _, c := range curves {
		long = long || len(c.rows) >= 2
	}
	slo, _ := sweep.ParseSLO(d.SLO)
	pm, ps := slo.Primary()
	if long {
		b.WriteString("<h2>Against the offered rate</h2>\n<div class=\"plots\">\n")
		for _, m := range []string{"ttft", "itl", "e2e"} {
			p := latencyPlot(d, curves, slo, m, pm, ps)
			b.WriteString(p.svg() + "\n")
		}
		for _, goodput := range []bool{true, false} {
			p := ratePlot(d, curves, goodput)
			b.WriteString(p.svg() + "\n")
		}
		b.WriteString("</div>\n")
	}
	if a := d.Answer; a != nil && len(a.Pareto) > 0 {
		b.WriteString("<h2>Cost</h2>\n<div class=\"plots\">\n")
		if a.Pareto[0].Of == "max_rate" {
			b.WriteString(maxRateCostPlot(d).svg() + "\n")
		} else {
			b.WriteString(paretoPlot(d, slo).svg() + "\n")
		}
		b.WriteString("</div>\n")
	}
}

// latencyPlot draws one metric against rate: p50, p90 and p99 of a single
// curve, or one statistic per curve (the SLO's for its metric, else p99).
func latencyPlot(d *sweep.Doc, curves []curve, slo sweep.SLO, metric, pm, ps string) *linePlot {
	name := strings.ToUpper(metric)
	p := &linePlot{id: "sweep-" + metric, xTitle: "offered rate (req/s)", yTitle: name + " latency", yLatency: true,
		title: name + " against the offered rate", missingExplained: "no steady state"}
	stats := []string{"p50", "p90", "p99"}
	dashes := []string{"2 3", dashSim, ""}
	if len(curves) > 1 {
		stat := "p99"
		if metric == pm {
			stat = ps
		}
		stats, dashes = []string{stat}, []string{""}
	}
	for i, c := range curves {
		col := palette[i%len(palette)]
		for j, st := range stats {
			s := series{color: col, dash: dashes[j], name: seriesName(c.name, st, len(curves))}
			for _, r := range c.rows {
				if v, ok := r.Latency(metric, st); ok {
					s.x, s.y = append(s.x, r.RateRPS), append(s.y, v*1e3)
					if d.Interval != nil {
						lo, hi, loOK, hiOK := r.Band.Bounds(metric, st)
						s.lo, s.hi = append(s.lo, orNaN(lo*1e3, loOK)), append(s.hi, orNaN(hi*1e3, hiOK))
					}
				} else if j == len(stats)-1 {
					s.missing = append(s.missing, r.RateRPS)
				}
			}
			p.series = append(p.series, s)
		}
	}
	for _, cl := range slo.Clauses {
		if cl.Metric == metric {
			p.hmarks = append(p.hmarks, mark{at: cl.LimitMs * 1e3, label: "SLO " + cl.Text, color: "#C00000"})
		}
	}
	if d.Answer != nil && metric == pm {
		p.vmarks = kneeMarks(d, curves)
	}
	p.desc = fmt.Sprintf("%s percentiles against the offered rate for %d deployment(s); dashed red lines are SLO bounds, dotted vertical lines the knees; × marks rates without a steady state.", name, len(curves))
	return p
}

// orNaN is v, or NaN when absent.
func orNaN(v float64, ok bool) float64 {
	if !ok {
		return math.NaN()
	}
	return v
}

func seriesName(curveName, stat string, curves int) string {
	switch {
	case curves == 1:
		return stat
	case curveName == "":
		return stat
	}
	return curveName + " " + stat
}

func kneeMarks(d *sweep.Doc, curves []curve) []mark {
	var out []mark
	for _, k := range d.Answer.Knees {
		name := sweep.ParamText(k.Curve)
		for i, c := range curves {
			if c.name == name {
				out = append(out, mark{at: k.RateRPS, label: "knee", color: palette[i%len(palette)]})
				break
			}
		}
	}
	return out
}

// ratePlot draws goodput (or throughput) against the offered rate, with
// the line where all that is offered is served.
func ratePlot(d *sweep.Doc, curves []curve, goodput bool) *linePlot {
	what, id := "throughput", "sweep-throughput"
	if goodput {
		what, id = "goodput", "sweep-goodput"
	}
	p := &linePlot{id: id, title: what + " against the offered rate", xTitle: "offered rate (req/s)",
		yTitle: what + " (req/s)", diagonal: true, diagonalLabel: "served = offered"}
	for i, c := range curves {
		s := series{name: c.name, color: palette[i%len(palette)]}
		if len(curves) == 1 {
			s.name = what
		}
		for _, r := range c.rows {
			v := r.ThroughputRPS
			if goodput {
				v = r.GoodputRPS
			}
			s.x, s.y = append(s.x, r.RateRPS), append(s.y, v)
		}
		p.series = append(p.series, s)
	}
	if goodput && d.Answer != nil {
		p.vmarks = kneeMarks(d, curves)
	}
	p.desc = fmt.Sprintf("Requests per second %s against requests per second offered, for %d deployment(s); the dotted diagonal is everything served.", map[bool]string{true: "meeting the SLO", false: "completed"}[goodput], len(curves))
	return p
}

// paretoPlot draws every steady, priced deployment by cost against the
// primary latency, hollow when it misses the SLO, one colour per load,
// each load's Pareto front as a line.
func paretoPlot(d *sweep.Doc, slo sweep.SLO) *linePlot {
	a := d.Answer
	p := &linePlot{id: "sweep-pareto", title: a.Primary + " against cost", xTitle: "cost (USD per hour)", yTitle: a.Primary, yLatency: true}
	pm, ps := slo.Primary()
	n := 0
	for i, set := range a.Pareto {
		col := palette[i%len(palette)]
		load := sweep.ParamText(set.Load)
		dots := series{color: col, dots: true}
		for j := range d.Rows {
			r := &d.Rows[j]
			_, key := sweep.LoadParams(r, d.LoadKeys)
			v, ok := r.Latency(pm, ps)
			if key != load || !ok || r.CostPerHour == nil || r.Role == sweep.RoleProbe {
				continue
			}
			dots.x, dots.y, dots.hollow = append(dots.x, *r.CostPerHour), append(dots.y, v*1e3), append(dots.hollow, !r.Met())
		}
		name := "Pareto front"
		if load != "" {
			name += " at " + load
		}
		front := series{name: name, color: col}
		for _, pt := range set.Points {
			front.x, front.y = append(front.x, pt.CostPerHour), append(front.y, pt.Value*1e3)
		}
		n += len(dots.x)
		p.series = append(p.series, dots, front)
	}
	for _, cl := range slo.Clauses {
		if cl.Name() == a.Primary {
			p.hmarks = append(p.hmarks, mark{at: cl.LimitMs * 1e3, label: "SLO " + cl.Text, color: "#C00000"})
		}
	}
	p.desc = fmt.Sprintf("%d deployment runs by cost per hour against %s, filled when they meet the SLO, hollow when not; lines join each load's Pareto front.", n, a.Primary)
	return p
}

// maxRateCostPlot draws each deployment's max rate under the SLO against
// its cost, with the Pareto front of the most rate for the money.
func maxRateCostPlot(d *sweep.Doc) *linePlot {
	a := d.Answer
	p := &linePlot{id: "sweep-pareto", title: "Max rate under the SLO against cost", xTitle: "cost (USD per hour)", yTitle: "max rate (req/s)"}
	dots := series{color: colReal, dots: true}
	for _, m := range a.MaxRates {
		if m.MaxRateRPS > 0 && m.CostPerHour != nil {
			dots.x, dots.y = append(dots.x, *m.CostPerHour), append(dots.y, m.MaxRateRPS)
		}
	}
	front := series{name: "Pareto front", color: colSim}
	for _, pt := range a.Pareto[0].Points {
		front.x, front.y = append(front.x, pt.CostPerHour), append(front.y, pt.Value)
	}
	p.series = []series{dots, front}
	p.desc = fmt.Sprintf("The max rate of %d deployments against their cost per hour; the line joins the Pareto front.", len(dots.x))
	return p
}
