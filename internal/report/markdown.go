package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// mdEscape keeps names from the inputs from being read as Markdown syntax.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_[]<>|", r) {
			b.WriteRune('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func mdTable(b *strings.Builder, header []string, rows [][]string, right []bool) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for i := range header {
		if right[i] {
			b.WriteString("--:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
}

// WriteMarkdown writes GitHub-flavoured Markdown for a CI job summary
// (docs/calibrate.md §11): plain Markdown, no raw HTML; the gate result, when gates
// were applied, is the last line.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	title := "# Calibration report"
	if r.Run.Model != "" {
		title += ": " + mdEscape(r.Run.Model)
	}
	b.WriteString(title + "\n\n")
	t := &r.TraceInfo
	for _, kv := range []struct {
		k string
		v int
	}{{"trace rows", t.NumRequests}, {"matched pairs", t.MatchedPairs}, {"warm-up excluded", t.WarmUpExcluded},
		{"excluded non-ok", t.ExcludedNonOK}, {"unmatched real", t.UnmatchedReal}, {"unmatched sim", t.UnmatchedSim},
		{"invalid timing", t.InvalidTiming}, {"token mismatches", t.TokenMismatches}, {"itl dropped", t.ITLDropped}} {
		fmt.Fprintf(&b, "- %s: %d\n", kv.k, kv.v)
	}
	fmt.Fprintf(&b, "- duration: %s\n\n", t.Duration)

	b.WriteString("## Metrics\n\n")
	var rows [][]string
	for _, row := range r.metricRows() {
		row[len(row)-1] = "**" + row[len(row)-1] + "**"
		rows = append(rows, row)
	}
	mdTable(&b, metricHeader(), rows, metricRight())
	b.WriteString("\n")

	if r.Goodput != nil {
		b.WriteString("## Goodput\n\n")
		var gr [][]string
		for _, class := range slices.Sorted(maps.Keys(r.Goodput.PerClass)) {
			g := r.Goodput.PerClass[class]
			tg := r.Goodput.Targets[class]
			gr = append(gr, []string{mdEscape(class), targetsText(tg), fmt.Sprint(g.Count), fmtPct(g.RealSLOAttainment),
				fmtPct(g.SimSLOAttainment), fmtRPS(g.RealGoodputRPS), fmtRPS(g.SimGoodputRPS)})
		}
		mdTable(&b, []string{"class", "targets", "n", "real attainment", "sim attainment", "real goodput", "sim goodput"},
			gr, []bool{false, false, true, true, true, true, true})
		b.WriteString("\n")
	}
	r.mdTiers(&b)

	b.WriteString("## Verdicts\n\n")
	for _, line := range []string{r.ttftToleranceText(), r.hitRateText(), r.configHeadline()} {
		if line != "" {
			b.WriteString("- " + mdEscape(line) + "\n")
		}
	}
	if rows, more := r.configRows(false); len(rows) > 0 {
		b.WriteString("\n## Deployment: trace and simulation\n\n")
		for _, row := range rows {
			for i := range row {
				row[i] = mdEscape(row[i])
			}
			if row[4] == "MISMATCH" {
				row[0], row[4] = "**"+row[0]+"**", "**MISMATCH**"
			}
		}
		mdTable(&b, configHeader(), rows, make([]bool, 5))
		if more > 0 {
			fmt.Fprintf(&b, "\n%d more keys in the JSON report.\n", more)
		}
	}
	b.WriteString("\n## Run validity\n\n")
	b.WriteString(mdEscape(r.validitySummary()) + "\n\n")
	var vr [][]string
	for _, c := range r.Validity.Checks {
		status := c.Status
		if status == StatusFlagged {
			status = "**flagged**"
		}
		vr = append(vr, []string{c.Name, status, mdEscape(c.Detail)})
	}
	mdTable(&b, []string{"check", "status", "detail"}, vr, []bool{false, false, false})
	b.WriteString("\n")
	for _, wdw := range r.Validity.Windows {
		verb := "Excluded"
		if wdw.Graded {
			verb = "Graded"
		}
		fmt.Fprintf(&b, "- %s %s: %d requests, %s to %s\n", verb, mdEscape(wdw.Label), wdw.Requests,
			fmtDur(float64(wdw.StartUs)), fmtDur(float64(wdw.EndUs)))
	}
	r.phasesMarkdown(&b)
	if r.Gate != nil {
		if r.Gate.Passed {
			b.WriteString("\n**Gate: PASS**\n")
		} else {
			b.WriteString("\n**Gate: FAIL**: " + mdEscape(strings.Join(r.Gate.Failures, "; ")) + "\n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: write markdown: %w", err)
	}
	return nil
}

// targetsText renders a class's targets: "ttft 250 ms, e2e 2.00 s".
func targetsText(t SLOTarget) string {
	var parts []string
	if t.TTFTMs > 0 {
		parts = append(parts, "ttft "+fmtDur(t.TTFTMs*1000))
	}
	if t.ITLMs > 0 {
		parts = append(parts, "itl "+fmtDur(t.ITLMs*1000))
	}
	if t.E2EMs > 0 {
		parts = append(parts, "e2e "+fmtDur(t.E2EMs*1000))
	}
	return strings.Join(parts, ", ")
}
