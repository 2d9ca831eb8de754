package report

import (
	"fmt"
	"html"
	"io"
	"maps"
	"slices"
	"strings"
)

// pageCSS is the page's only style sheet: inline, no fonts or images to fetch.
const pageCSS = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#222;line-height:1.4}
h1{font-size:1.5em;margin:0 0 8px}h2{font-size:1.2em;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:.92em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f3f3}
.badge{display:inline-block;white-space:nowrap;padding:1px 8px;border-radius:9px;font-weight:600;font-size:.9em}
.excellent{background:#cfe8d6}.good{background:#dcebc4}.fair{background:#f6e3b4}.poor{background:#f3c4bd}
.flagged{background:#f3c4bd}.ok{background:#dcebc4}.not_assessed{background:#e6e6e6}
.banner{padding:8px 12px;border-radius:6px;margin:8px 0 16px;font-weight:600}.pass{background:#dcebc4}.fail{background:#f3c4bd}
.plots{display:flex;flex-wrap:wrap;gap:8px 24px;align-items:flex-start}h3{font-size:1em;margin:8px 0 2px}
svg{font-family:inherit;background:#fff}svg .plotbg{fill:#fafafa}svg .grid{stroke:#e2e2e2;stroke-width:1}
svg .frame{fill:none;stroke:#888;stroke-width:1}svg .tick{font-size:10px;fill:#444}svg .axis{font-size:11px;fill:#222}
svg .legend{font-size:11px;fill:#222}svg .mark{stroke:#777;stroke-width:1;stroke-dasharray:2 3}
svg .diag{stroke:#222;stroke-width:1.3}svg .band{fill:#999;fill-opacity:.18}svg .zero{stroke:#222;stroke-width:1.3}
svg .bar{fill:#0072B2;fill-opacity:.75}svg .bar.over{fill:#6a6a6a}
.muted{color:#666}ul{margin:4px 0 12px}.headline{font-size:1.1em;margin:4px 0 2px}`

func esc(s string) string { return html.EscapeString(s) }

func htmlTable(b *strings.Builder, header []string, rows [][]string, right []bool, raw bool) {
	b.WriteString("<table><thead><tr>")
	for i, h := range header {
		cls := ""
		if right[i] {
			cls = ` class="n"`
		}
		fmt.Fprintf(b, "<th%s>%s</th>", cls, esc(h))
	}
	b.WriteString("</tr></thead><tbody>")
	for _, row := range rows {
		b.WriteString("<tr>")
		for i, c := range row {
			cls := ""
			if right[i] {
				cls = ` class="n"`
			}
			if !raw {
				c = esc(c)
			}
			fmt.Fprintf(b, "<td%s>%s</td>", cls, c)
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table>\n")
}

func badge(class, text string) string {
	return `<span class="badge ` + esc(class) + `">` + esc(text) + `</span>`
}

// WriteHTML writes one self-contained HTML page (docs/calibrate.md §11): inline CSS
// and SVG, no scripts, nothing fetched. Plots need the pairs a Build keeps, so a
// Report decoded from JSON renders its tables without plots.
func (r *Report) WriteHTML(w io.Writer) error {
	var b strings.Builder
	title := "Calibration report"
	if r.Run.Model != "" {
		title += ": " + r.Run.Model
	}
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(&b, "<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", esc(title), pageCSS)
	fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(title))
	r.htmlHeadline(&b)
	if r.Gate != nil {
		if r.Gate.Passed {
			b.WriteString(`<div class="banner pass">Gate: PASS</div>` + "\n")
		} else {
			b.WriteString(`<div class="banner fail">Gate: FAIL: ` + esc(strings.Join(r.Gate.Failures, "; ")) + "</div>\n")
		}
	}
	fmt.Fprintf(&b, "<p>%s</p>\n", esc(r.summaryLine()))

	b.WriteString("<h2>Summary</h2>\n")
	var rows [][]string
	for _, row := range r.metricRows() {
		for i := range row {
			row[i] = esc(row[i])
		}
		row[len(row)-1] = badge(row[len(row)-1], row[len(row)-1])
		rows = append(rows, row)
	}
	htmlTable(&b, metricHeader(), rows, metricRight(), true)
	b.WriteString("<div class=\"plots\">\n<div>\n<h3>Requests</h3>\n")
	r.htmlBuckets(&b)
	b.WriteString("</div>\n<div>\n<h3>Trace</h3>\n")
	r.htmlRun(&b)
	b.WriteString("</div>\n</div>\n")
	r.htmlValidity(&b)
	r.htmlPhases(&b)
	r.htmlDeployment(&b)

	for _, name := range r.MetricNames() {
		p := r.pairs[name]
		if p == nil {
			continue
		}
		fmt.Fprintf(&b, "<h2>%s</h2>\n<div class=\"plots\">\n", esc(name))
		b.WriteString(cdfSVG("cdf-"+name, name, p) + "\n")
		b.WriteString(scatterSVG("scatter-"+name, name, p) + "\n")
		b.WriteString(histogramSVG("hist-"+name, name, p) + "\n")
		b.WriteString("</div>\n")
	}
	r.htmlVerdicts(&b)
	b.WriteString("</body>\n</html>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write html: %w", err)
	}
	return nil
}

func (r *Report) htmlBuckets(b *strings.Builder) {
	t := &r.TraceInfo
	rows := [][]string{
		{"trace rows", fmt.Sprint(t.NumRequests)}, {"matched pairs", fmt.Sprint(t.MatchedPairs)},
		{"warm-up excluded", fmt.Sprint(t.WarmUpExcluded)}, {"excluded non-ok", fmt.Sprint(t.ExcludedNonOK)},
		{"unmatched real", fmt.Sprint(t.UnmatchedReal)}, {"unmatched sim", fmt.Sprint(t.UnmatchedSim)},
		{"invalid timing", fmt.Sprint(t.InvalidTiming)}, {"token mismatches", fmt.Sprint(t.TokenMismatches)},
		{"itl dropped", fmt.Sprint(t.ITLDropped)}, {"duration", t.Duration},
	}
	htmlTable(b, []string{"requests", "count"}, rows, []bool{false, true}, false)
}

func (r *Report) htmlRun(b *strings.Builder) {
	run := &r.Run
	seed := "-"
	if run.WorkloadSeed != nil {
		seed = fmt.Sprint(*run.WorkloadSeed)
	}
	orDash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	warm := fmt.Sprintf("request_id < %d", run.WarmupRequests)
	if run.WarmupDurationUs > 0 {
		warm += " or arrival < " + fmtDur(float64(run.WarmupDurationUs))
	}
	bw := "none"
	if run.BandwidthMbps > 0 {
		bw = fmtNum(run.BandwidthMbps) + " Mb/s"
	}
	htmlTable(b, []string{"field", "value"}, [][]string{
		{"mode", orDash(run.Mode)}, {"model", orDash(run.Model)}, {"workload seed", seed},
		{"workload spec", orDash(run.WorkloadSpec)}, {"network RTT added to sim", fmtDur(float64(run.NetworkRTTUs))},
		{"bandwidth", bw}, {"warm-up", warm}, {"ttft from", run.TTFTFrom},
	}, []bool{false, false}, false)
}

func (r *Report) htmlValidity(b *strings.Builder) {
	b.WriteString("<h2>Run validity</h2>\n")
	fmt.Fprintf(b, "<p>%s</p>\n", esc(r.validitySummary()))
	var rows [][]string
	for _, c := range r.Validity.Checks {
		rows = append(rows, []string{esc(c.Name), badge(c.Status, strings.ReplaceAll(c.Status, "_", " ")), esc(c.Detail)})
	}
	htmlTable(b, []string{"check", "status", "detail"}, rows, []bool{false, false, false}, true)
	var wr [][]string
	for _, w := range r.Validity.Windows {
		g := "excluded"
		if w.Graded {
			g = "graded"
		}
		wr = append(wr, []string{w.Label, g, fmt.Sprint(w.Requests), fmtDur(float64(w.StartUs)), fmtDur(float64(w.EndUs))})
	}
	htmlTable(b, []string{"window", "", "requests", "from", "to"}, wr, []bool{false, false, true, true, true}, false)
}

func (r *Report) htmlVerdicts(b *strings.Builder) {
	if r.Goodput != nil {
		b.WriteString("<h2>Goodput</h2>\n")
		var rows [][]string
		for _, class := range slices.Sorted(maps.Keys(r.Goodput.PerClass)) {
			g := r.Goodput.PerClass[class]
			rows = append(rows, []string{class, targetsText(r.Goodput.Targets[class]), fmt.Sprint(g.Count),
				fmtPct(g.RealSLOAttainment), fmtPct(g.SimSLOAttainment), fmtRPS(g.RealGoodputRPS), fmtRPS(g.SimGoodputRPS)})
		}
		htmlTable(b, []string{"class", "targets", "n", "real attainment", "sim attainment", "real goodput", "sim goodput"},
			rows, []bool{false, false, true, true, true, true, true}, false)
	}
	b.WriteString("<h2>Verdicts</h2>\n<ul>\n")
	for _, line := range []string{r.ttftToleranceText(), r.hitRateText(), r.configHeadline()} {
		if line != "" {
			fmt.Fprintf(b, "<li>%s</li>\n", esc(line))
		}
	}
	if r.HitRate == nil {
		b.WriteString("<li class=\"muted\">hit rate: not compared</li>\n")
	}
	b.WriteString("</ul>\n<h2>Known limitations</h2>\n<ul>\n")
	for _, l := range r.KnownLimitations {
		fmt.Fprintf(b, "<li>%s</li>\n", esc(l))
	}
	b.WriteString("</ul>\n")
}

// htmlHeadline opens the page with the three answers a reader wants first:
// how good the prediction is (the worst grade of the gated metrics, ttft
// and e2e), whether the run was valid to grade, and whether the simulation
// was of the server the trace was measured on.
func (r *Report) htmlHeadline(b *strings.Builder) {
	grade, of := "", []string{}
	for _, m := range []string{MetricTTFT, MetricE2E} {
		if c := r.Metrics[m]; c != nil {
			of = append(of, m)
			if g := c.RequestLevel.Quality; grade == "" || gradeRank(g) < gradeRank(grade) {
				grade = g
			}
		}
	}
	b.WriteString(`<div class="headline">`)
	if grade != "" {
		fmt.Fprintf(b, "Grade %s <span class=\"muted\">(worst of %s)</span> &middot; ", badge(grade, grade), esc(strings.Join(of, ", ")))
	}
	valid, vclass := "valid", StatusOK
	if f := r.Validity.Flagged(); len(f) > 0 {
		valid, vclass = "flagged: "+strings.Join(f, ", "), StatusFlagged
	}
	fmt.Fprintf(b, "Validity %s &middot; ", badge(vclass, valid))
	cfg, cclass := "not checked", StatusNotAssessed
	if m := r.ConfigMatch.Match; m != nil {
		cfg, cclass = "match", StatusOK
		if !*m {
			n := len(r.ConfigMatch.Mismatched)
			cfg, cclass = fmt.Sprintf("MISMATCH (%d %s)", n, plural(n, "key", "keys")), StatusFlagged
		}
	}
	fmt.Fprintf(b, "Config %s</div>\n", badge(cclass, cfg))
	fmt.Fprintf(b, "<p class=\"muted\">%s</p>\n", esc(r.configHeadline()))
}

// htmlDeployment shows the deployment the trace states beside the one the
// simulation ran, every compared key, mismatches marked.
func (r *Report) htmlDeployment(b *strings.Builder) {
	b.WriteString("<h2>Deployment: trace and simulation</h2>\n")
	rows, _ := r.configRows(true)
	if len(rows) == 0 {
		fmt.Fprintf(b, "<p class=\"muted\">%s</p>\n", esc(r.configHeadline()))
		return
	}
	for _, row := range rows {
		for i := range row {
			row[i] = esc(row[i])
		}
		switch row[4] {
		case "MISMATCH":
			row[0], row[4] = "<strong>"+row[0]+"</strong>", badge(StatusFlagged, "mismatch")
		case KeyMatched:
			row[4] = badge(StatusOK, "match")
		default:
			row[4] = badge(StatusNotAssessed, row[4])
		}
	}
	htmlTable(b, configHeader(), rows, make([]bool, 5), true)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
