package abtest

import (
	"fmt"
	"strings"

	"servesim/internal/render"
)

// verdictBadge is the style sheet's colour of a verdict.
var verdictBadge = map[string]string{VerdictBetter: "good", VerdictWorse: "poor", VerdictWithinNoise: "fair",
	VerdictNone: "not_assessed", VerdictNA: "not_assessed"}

// html is the page: the answer, the table, both runs' CDF curves of each
// latency, the deployments side by side, the notes. Every text from the
// inputs is escaped.
func (r *Result) html() string {
	var b strings.Builder
	render.PageHead(&b, "calibrate compare: B against A")
	banner := "pass"
	for _, m := range r.Metrics {
		if m.Verdict == VerdictWorse {
			banner = "fail"
		}
	}
	fmt.Fprintf(&b, "<div class=\"banner %s\">%s</div>\n<ul>\n", banner, render.Esc(r.Headline()))
	for _, f := range r.findings() {
		fmt.Fprintf(&b, "<li>%s</li>\n", render.Esc(f))
	}
	b.WriteString("</ul>\n<ul class=\"muted\">\n")
	for _, l := range r.intro() {
		fmt.Fprintf(&b, "<li>%s</li>\n", render.Esc(l))
	}
	b.WriteString("</ul>\n<h2>Metrics</h2>\n")
	rows := r.metricRows()
	for i := range rows {
		for j, c := range rows[i] {
			rows[i][j] = render.Esc(c)
		}
		v := r.Metrics[i].Verdict
		rows[i][len(rows[i])-1] = render.Badge(verdictBadge[v], v)
	}
	render.Table(&b, metricHeader, rows, []bool{false, true, true, true, true, true, false}, true)
	b.WriteString("<h2>Distributions</h2>\n<div class=\"plots\">\n")
	names := map[string]string{famTTFT: "TTFT", famTPOT: "TPOT", famE2E: "E2E"}
	for _, fam := range latencyFamilies {
		c := r.curves[fam]
		if len(c[0]) == 0 || len(c[1]) == 0 {
			continue
		}
		cdf := render.CDF{ID: "cdf-" + fam, Title: names[fam] + ": CDF of A and B", XTitle: names[fam] + " latency",
			Names: [2]string{"A", "B"}, Sorted: c}
		scale := "linear"
		if cdf.LogScale() {
			scale = "logarithmic"
		}
		cdf.Desc = fmt.Sprintf("Empirical CDF of %d %s values of A (blue, solid) and %d of B (vermillion, dashed) on a %s x axis; dotted lines mark p50 and p99.",
			len(c[0]), names[fam], len(c[1]), scale)
		b.WriteString(cdf.SVG() + "\n")
	}
	b.WriteString("</div>\n<h2>Deployments</h2>\n")
	if dr := r.deploymentRows(); len(dr) > 0 {
		for i := range dr {
			for j, c := range dr[i] {
				dr[i][j] = render.Esc(c)
			}
			if dr[i][3] == "DIFFERS" {
				dr[i][3] = render.Badge("flagged", "DIFFERS")
			}
		}
		render.Table(&b, deploymentHeader, dr, []bool{false, false, false, false}, true)
	} else {
		b.WriteString("<p class=\"muted\">Neither trace states its deployment.</p>\n")
	}
	var notes strings.Builder
	r.notes(&notes, "")
	if notes.Len() > 0 {
		fmt.Fprintf(&b, "<h2>Notes</h2>\n<pre>%s</pre>\n", render.Esc(strings.TrimSpace(notes.String())))
	}
	b.WriteString("</body>\n</html>\n")
	return b.String()
}
