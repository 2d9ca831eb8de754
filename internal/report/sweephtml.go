package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"servesim/internal/render"
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
	render.PageHead(&b, title)
	fmt.Fprintf(&b, "<p>%s</p>\n", render.Esc(sweepHeadline(d)))
	if len(d.Base) > 0 {
		fmt.Fprintf(&b, "<p class=\"muted\">base: %s</p>\n", render.Esc(sweep.ParamText(d.Base)))
	}
	if a := d.Answer; a != nil && d.SLO != "" {
		cls, verdict := "pass", "SLO "+d.SLO+": met"
		if !a.Met {
			cls, verdict = "fail", "SLO "+d.SLO+": not met by any case"
		}
		fmt.Fprintf(&b, "<div class=\"banner %s\">%s</div>\n", cls, render.Esc(verdict))
	}
	if a := d.Answer; a != nil && len(a.Verdict) > 0 {
		b.WriteString("<h2>Answer</h2>\n<ul>\n")
		for _, v := range a.Verdict {
			fmt.Fprintf(&b, "<li>%s</li>\n", render.Esc(v))
		}
		for _, k := range a.Knees {
			fmt.Fprintf(&b, "<li>knee of %s: %s req/s (%s)%s</li>\n", render.Esc(a.Primary), fmtRate(k.RateRPS), fmtDur(k.LatencyMs*1e3), render.Esc(curveName(k.Curve)))
		}
		b.WriteString("</ul>\n")
	}
	if d.Shard != "" {
		fmt.Fprintf(&b, "<p class=\"muted\">shard %s: merge every shard's JSON with <code>sweep merge</code> for the answer.</p>\n", render.Esc(d.Shard))
	}
	sweepPlots(&b, d)
	b.WriteString("<h2>Runs</h2>\n")
	header, right := sweepColumns(d)
	rows := make([][]string, len(d.Rows))
	for i := range d.Rows {
		rows[i] = sweepCells(d, &d.Rows[i])
	}
	render.Table(&b, header, rows, right, false)
	b.WriteString("<p class=\"muted\">A run whose queue grew until its end reached no steady state: it is marked unstable and its latencies are not reported. Goodput counts the requests meeting the SLO's bounds per request.</p>\n")
	if len(d.Prices) > 0 {
		b.WriteString("<h2>Prices</h2>\n<ul>\n")
		for _, p := range d.Prices {
			fmt.Fprintf(&b, "<li>%s: $%.2f per GPU-hour (%s)</li>\n", render.Esc(p.GPU), p.USDPerHour, render.Esc(p.Source))
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
			b.WriteString(p.SVG() + "\n")
		}
		for _, goodput := range []bool{true, false} {
			p := ratePlot(d, curves, goodput)
			b.WriteString(p.SVG() + "\n")
		}
		b.WriteString("</div>\n")
	}
	if a := d.Answer; a != nil && len(a.Pareto) > 0 {
		b.WriteString("<h2>Cost</h2>\n<div class=\"plots\">\n")
		if a.Pareto[0].Of == "max_rate" {
			b.WriteString(maxRateCostPlot(d).SVG() + "\n")
		} else {
			b.WriteString(paretoPlot(d, slo).SVG() + "\n")
		}
		b.WriteString("</div>\n")
	}
}

// latencyPlot draws one metric against rate: p50, p90 and p99 of a single
// curve, or one statistic per curve (the SLO's for its metric, else p99).
func latencyPlot(d *sweep.Doc, curves []curve, slo sweep.SLO, metric, pm, ps string) *render.Plot {
	name := strings.ToUpper(metric)
	p := &render.Plot{ID: "sweep-" + metric, XTitle: "offered rate (req/s)", YTitle: name + " latency", YLatency: true,
		Title: name + " against the offered rate", MissingExplained: "no steady state"}
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
		col := render.Palette[i%len(render.Palette)]
		for j, st := range stats {
			s := render.Series{Color: col, Dash: dashes[j], Name: seriesName(c.name, st, len(curves))}
			for _, r := range c.rows {
				if v, ok := r.Latency(metric, st); ok {
					s.X, s.Y = append(s.X, r.RateRPS), append(s.Y, v*1e3)
					if d.Interval != nil {
						lo, hi, loOK, hiOK := r.Band.Bounds(metric, st)
						s.Lo, s.Hi = append(s.Lo, orNaN(lo*1e3, loOK)), append(s.Hi, orNaN(hi*1e3, hiOK))
					}
				} else if j == len(stats)-1 {
					s.Missing = append(s.Missing, r.RateRPS)
				}
			}
			p.Series = append(p.Series, s)
		}
	}
	for _, cl := range slo.Clauses {
		if cl.Metric == metric {
			p.HMarks = append(p.HMarks, render.Mark{At: cl.LimitMs * 1e3, Label: "SLO " + cl.Text, Color: render.SLORed})
		}
	}
	if d.Answer != nil && metric == pm {
		p.VMarks = kneeMarks(d, curves)
	}
	p.Desc = fmt.Sprintf("%s percentiles against the offered rate for %d deployment(s); dashed red lines are SLO bounds, dotted vertical lines the knees; × marks rates without a steady state, ▲ values above the axis.", name, len(curves))
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

func kneeMarks(d *sweep.Doc, curves []curve) []render.Mark {
	var out []render.Mark
	for _, k := range d.Answer.Knees {
		name := sweep.ParamText(k.Curve)
		for i, c := range curves {
			if c.name == name {
				out = append(out, render.Mark{At: k.RateRPS, Label: "knee", Color: render.Palette[i%len(render.Palette)]})
				break
			}
		}
	}
	return out
}

// ratePlot draws goodput (or throughput) against the offered rate, with
// the line where all that is offered is served.
func ratePlot(d *sweep.Doc, curves []curve, goodput bool) *render.Plot {
	what, id := "throughput", "sweep-throughput"
	if goodput {
		what, id = "goodput", "sweep-goodput"
	}
	p := &render.Plot{ID: id, Title: what + " against the offered rate", XTitle: "offered rate (req/s)",
		YTitle: what + " (req/s)", Diagonal: true, DiagonalLabel: "served = offered"}
	for i, c := range curves {
		s := render.Series{Name: c.name, Color: render.Palette[i%len(render.Palette)]}
		if len(curves) == 1 {
			s.Name = what
		}
		for _, r := range c.rows {
			v := r.ThroughputRPS
			if goodput {
				v = r.GoodputRPS
			}
			s.X, s.Y = append(s.X, r.RateRPS), append(s.Y, v)
		}
		p.Series = append(p.Series, s)
	}
	if goodput && d.Answer != nil {
		p.VMarks = kneeMarks(d, curves)
	}
	p.Desc = fmt.Sprintf("Requests per second %s against requests per second offered, for %d deployment(s); the dotted diagonal is everything served.", map[bool]string{true: "meeting the SLO", false: "completed"}[goodput], len(curves))
	return p
}

// maxCaseLabels bounds the points of a cost plot that are labelled with
// their case: beyond it the labels would crowd out the points.
const maxCaseLabels = 40

// paretoPlot draws every steady, priced deployment by cost against the
// primary latency, each labelled with its case, hollow when it misses the
// SLO, one colour per load, each load's Pareto front as a line.
func paretoPlot(d *sweep.Doc, slo sweep.SLO) *render.Plot {
	a := d.Answer
	p := &render.Plot{ID: "sweep-pareto", Title: a.Primary + " against cost", XTitle: "cost (USD per hour)", YTitle: a.Primary, YLatency: true, LabelPoints: maxCaseLabels}
	pm, ps := slo.Primary()
	n := 0
	for i, set := range a.Pareto {
		col := render.Palette[i%len(render.Palette)]
		load := sweep.ParamText(set.Load)
		dots := render.Series{Color: col, Dots: true}
		onFront := map[int]bool{}
		for _, pt := range set.Points {
			onFront[pt.Case] = true
		}
		for j := range d.Rows {
			r := &d.Rows[j]
			_, key := sweep.LoadParams(r, d.LoadKeys)
			v, ok := r.Latency(pm, ps)
			if key != load || !ok || r.CostPerHour == nil || r.Role == sweep.RoleProbe {
				continue
			}
			dots.X, dots.Y, dots.Hollow = append(dots.X, *r.CostPerHour), append(dots.Y, v*1e3), append(dots.Hollow, !r.Met())
			label := "#" + strconv.Itoa(r.Case)
			if onFront[r.Case] {
				label = "" // the front's label names it
			}
			dots.Labels = append(dots.Labels, label)
		}
		name := "Pareto front"
		if load != "" {
			name += " at " + load
		}
		front := render.Series{Name: name, Color: col}
		for _, pt := range set.Points {
			front.X, front.Y = append(front.X, pt.CostPerHour), append(front.Y, pt.Value*1e3)
			front.Labels = append(front.Labels, "#"+strconv.Itoa(pt.Case)+" "+render.TickDur(pt.Value*1e3))
		}
		n += len(dots.X)
		// The front's labels (case and value) win over the dots' (case).
		p.Series = append(p.Series, front, dots)
	}
	for _, cl := range slo.Clauses {
		if cl.Name() == a.Primary {
			p.HMarks = append(p.HMarks, render.Mark{At: cl.LimitMs * 1e3, Label: "SLO " + cl.Text, Color: render.SLORed})
		}
	}
	p.Desc = fmt.Sprintf("%d deployment runs by cost per hour against %s, labelled with their case (see Runs), filled when they meet the SLO, hollow when not; lines join each load's Pareto front.", n, a.Primary)
	return p
}

// maxRateCostPlot draws each deployment's max rate under the SLO against
// its cost, with the Pareto front of the most rate for the money.
func maxRateCostPlot(d *sweep.Doc) *render.Plot {
	a := d.Answer
	p := &render.Plot{ID: "sweep-pareto", Title: "Max rate under the SLO against cost", XTitle: "cost (USD per hour)", YTitle: "max rate (req/s)", LabelPoints: maxCaseLabels}
	dots := render.Series{Color: colReal, Dots: true}
	for _, m := range a.MaxRates {
		if m.MaxRateRPS > 0 && m.CostPerHour != nil {
			dots.X, dots.Y = append(dots.X, *m.CostPerHour), append(dots.Y, m.MaxRateRPS)
			dots.Labels = append(dots.Labels, "#"+strconv.Itoa(m.Case))
		}
	}
	front := render.Series{Name: "Pareto front", Color: colSim}
	for _, pt := range a.Pareto[0].Points {
		front.X, front.Y = append(front.X, pt.CostPerHour), append(front.Y, pt.Value)
	}
	p.Series = []render.Series{front, dots}
	p.Desc = fmt.Sprintf("The max rate of %d deployments against their cost per hour, labelled with their case; the line joins the Pareto front.", len(dots.X))
	return p
}
