package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"servesim/internal/render"
)

// WriteHTML writes one self-contained HTML page (docs/calibrate.md §11): inline CSS
// and SVG, no scripts, nothing fetched. Plots need the pairs a Build keeps, so a
// Report decoded from JSON renders its tables without plots.
func (r *Report) WriteHTML(w io.Writer) error {
	var b strings.Builder
	title := "Calibration report"
	if r.Run.Model != "" {
		title += ": " + r.Run.Model
	}
	render.PageHead(&b, title)
	r.htmlHeadline(&b)
	if r.Gate != nil {
		if r.Gate.Passed {
			b.WriteString(`<div class="banner pass">Gate: PASS</div>` + "\n")
		} else {
			b.WriteString(`<div class="banner fail">Gate: FAIL: ` + render.Esc(strings.Join(r.Gate.Failures, "; ")) + "</div>\n")
		}
	}
	fmt.Fprintf(&b, "<p>%s</p>\n", render.Esc(r.summaryLine()))

	b.WriteString("<h2>Summary</h2>\n")
	var rows [][]string
	for _, row := range r.metricRows() {
		for i := range row {
			row[i] = render.Esc(row[i])
		}
		row[len(row)-1] = render.Badge(row[len(row)-1], row[len(row)-1])
		rows = append(rows, row)
	}
	render.Table(&b, metricHeader(), rows, metricRight(), true)
	b.WriteString("<div class=\"plots\">\n<div>\n<h3>Requests</h3>\n")
	r.htmlBuckets(&b)
	b.WriteString("</div>\n<div>\n<h3>Trace</h3>\n")
	r.htmlRun(&b)
	b.WriteString("</div>\n</div>\n")
	r.htmlValidity(&b)
	if p, q := r.pairs[MetricTTFT], r.pairs[MetricE2E]; p != nil && q != nil && len(r.arrivals) > 0 {
		b.WriteString("<h2>Latency over the run</h2>\n<div class=\"plots\">\n")
		b.WriteString(timelineSVG("time-ttft", MetricTTFT, r.arrivals, p) + "\n")
		b.WriteString(timelineSVG("time-e2e", MetricE2E, r.arrivals, q) + "\n")
		b.WriteString("</div>\n")
	}
	r.htmlPhases(&b)
	r.htmlDeployment(&b)

	for _, name := range r.MetricNames() {
		p := r.pairs[name]
		if p == nil {
			continue
		}
		fmt.Fprintf(&b, "<h2>%s</h2>\n<div class=\"plots\">\n", render.Esc(name))
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
		{"itl dropped", fmt.Sprint(t.ITLDropped)}, {"duration", spanText(t.Duration)},
	}
	render.Table(b, []string{"requests", "count"}, rows, []bool{false, true}, false)
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
		warm += " or arrival < " + render.Span(float64(run.WarmupDurationUs))
	}
	rtt := "none"
	if run.NetworkRTTUs > 0 {
		rtt = fmtDur(float64(run.NetworkRTTUs))
	}
	bw := "none"
	if run.BandwidthMbps > 0 {
		bw = fmtNum(run.BandwidthMbps) + " Mb/s"
	}
	render.Table(b, []string{"field", "value"}, [][]string{
		{"mode", orDash(run.Mode)}, {"model", orDash(run.Model)}, {"workload seed", seed},
		{"workload spec", orDash(run.WorkloadSpec)}, {"network RTT added to sim", rtt},
		{"bandwidth", bw}, {"warm-up", warm}, {"ttft from", run.TTFTFrom},
	}, []bool{false, false}, false)
}

func (r *Report) htmlValidity(b *strings.Builder) {
	b.WriteString("<h2>Run validity</h2>\n")
	fmt.Fprintf(b, "<p>%s</p>\n", render.Esc(r.validitySummary()))
	var rows [][]string
	for _, c := range r.Validity.Checks {
		rows = append(rows, []string{render.Esc(c.Name), render.Badge(c.Status, strings.ReplaceAll(c.Status, "_", " ")), render.Esc(c.Detail)})
	}
	render.Table(b, []string{"check", "status", "detail"}, rows, []bool{false, false, false}, true)
	var wr [][]string
	for _, w := range r.Validity.Windows {
		g := "excluded"
		if w.Graded {
			g = "graded"
		}
		wr = append(wr, []string{w.Label, g, fmt.Sprint(w.Requests), render.Span(float64(w.StartUs)), render.Span(float64(w.EndUs))})
	}
	render.Table(b, []string{"window", "", "requests", "from", "to"}, wr, []bool{false, false, true, true, true}, false)
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
		render.Table(b, []string{"class", "targets", "n", "real attainment", "sim attainment", "real goodput", "sim goodput"},
			rows, []bool{false, false, true, true, true, true, true}, false)
	}
	r.htmlTiers(b)
	b.WriteString("<h2>Verdicts</h2>\n<ul>\n")
	for _, line := range []string{r.ttftToleranceText(), r.hitRateText(), r.configHeadline()} {
		if line != "" {
			fmt.Fprintf(b, "<li>%s</li>\n", render.Esc(line))
		}
	}
	if r.HitRate == nil {
		b.WriteString("<li class=\"muted\">hit rate: not compared</li>\n")
	}
	b.WriteString("</ul>\n<h2>Known limitations</h2>\n<ul>\n")
	for _, l := range r.KnownLimitations {
		fmt.Fprintf(b, "<li>%s</li>\n", render.Esc(l))
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
		fmt.Fprintf(b, "Grade %s <span class=\"muted\">(worst of %s)</span> &middot; ", render.Badge(grade, grade), render.Esc(strings.Join(of, ", ")))
	}
	valid, vclass := "valid", StatusOK
	if f := r.Validity.Flagged(); len(f) > 0 {
		valid, vclass = "flagged: "+strings.Join(f, ", "), StatusFlagged
	}
	fmt.Fprintf(b, "Validity %s &middot; ", render.Badge(vclass, valid))
	cfg, cclass := "not checked", StatusNotAssessed
	if m := r.ConfigMatch.Match; m != nil {
		cfg, cclass = "match", StatusOK
		if !*m {
			n := len(r.ConfigMatch.Mismatched)
			cfg, cclass = fmt.Sprintf("MISMATCH (%d %s)", n, plural(n, "key", "keys")), StatusFlagged
		}
	}
	fmt.Fprintf(b, "Config %s</div>\n", render.Badge(cclass, cfg))
	fmt.Fprintf(b, "<p class=\"muted\">%s</p>\n", render.Esc(r.configHeadline()))
}

// htmlDeployment shows the deployment the trace states beside the one the
// simulation ran, every compared key, mismatches marked.
func (r *Report) htmlDeployment(b *strings.Builder) {
	b.WriteString("<h2>Deployment: trace and simulation</h2>\n")
	rows, _ := r.configRows(true)
	if len(rows) == 0 {
		fmt.Fprintf(b, "<p class=\"muted\">%s</p>\n", render.Esc(r.configHeadline()))
		return
	}
	for _, row := range rows {
		for i := range row {
			row[i] = render.Esc(row[i])
		}
		switch row[4] {
		case "MISMATCH":
			row[0], row[4] = "<strong>"+row[0]+"</strong>", render.Badge(StatusFlagged, "mismatch")
		case KeyMatched:
			row[4] = render.Badge(StatusOK, "match")
		default:
			row[4] = render.Badge(StatusNotAssessed, row[4])
		}
	}
	render.Table(b, configHeader(), rows, make([]bool, 5), true)
}

// spanText renders the trace's duration (Go syntax, as the JSON report
// keeps it) for a person: 3 min 4 s, not 3m3.567455s.
func spanText(d string) string {
	v, err := time.ParseDuration(d)
	if err != nil {
		return d
	}
	return render.Span(float64(v.Microseconds()))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
