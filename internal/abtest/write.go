package abtest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"servesim/internal/render"
	"servesim/internal/report"
	"servesim/internal/tracev2"
)

// Formats are the renderings of a result.
func Formats() []string { return []string{"text", "json", "markdown", "html"} }

// Write renders the result in format (Formats) to w.
func (r *Result) Write(w io.Writer, format string) error {
	var s string
	switch format {
	case "text":
		s = r.text()
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		s = string(b) + "\n"
	case "markdown":
		s = r.markdown()
	case "html":
		s = r.html()
	default:
		return fmt.Errorf("format %q: want one of %v", format, Formats())
	}
	_, err := io.WriteString(w, s)
	return err
}

// Headline is the answer in one line: what is beyond the noise, or that
// nothing is.
func (r *Result) Headline() string {
	var better, worse int
	for _, m := range r.Metrics {
		switch m.Verdict {
		case VerdictBetter:
			better++
		case VerdictWorse:
			worse++
		}
	}
	if better+worse == 0 {
		return "no difference this run can detect beyond the noise"
	}
	return fmt.Sprintf("B is better on %d and worse on %d of %d metrics, beyond the noise", better, worse, len(r.Metrics))
}

// findings are the sentences of the metrics beyond the noise, else of the
// ones within it.
func (r *Result) findings() []string {
	var out []string
	for _, m := range r.Metrics {
		if m.Verdict == VerdictBetter || m.Verdict == VerdictWorse {
			out = append(out, m.Sentence)
		}
	}
	return out
}

func (r *Result) intro() []string {
	lines := []string{
		fmt.Sprintf("A: %s (%s, %d requests, %d ok)", strings.Join(r.A.Traces, ", "), orDash(r.A.Model), r.A.Requests, r.A.OK),
		fmt.Sprintf("B: %s (%s, %d requests, %d ok)", strings.Join(r.B.Traces, ", "), orDash(r.B.Model), r.B.Requests, r.B.OK),
		fmt.Sprintf("mode: %s: %s", r.Mode, r.ModeReason),
		fmt.Sprintf("bootstrap: %d resamples, %g%% intervals, seed %d", r.Resamples, r.Confidence*100, r.Seed),
	}
	if r.SLO != "" {
		lines = append(lines, "goodput SLO: "+r.SLO)
	}
	return lines
}

func orDash(s string) string {
	if s == "" {
		return "model not stated"
	}
	return s
}

// value renders a metric's value in its unit.
func value(v float64, unit string) string {
	if unit == "us" {
		return render.Dur(v)
	}
	return render.Sig3(v) + " " + unit
}

var metricHeader = []string{"metric", "A", "B", "B vs A", "CI", "noise floor", "verdict"}

func (r *Result) metricRows() [][]string {
	var rows [][]string
	for _, m := range r.Metrics {
		row := []string{m.Name, value(m.A, m.Unit), value(m.B, m.Unit), "-", "-", pct(m.NoiseFloor), m.Verdict}
		if m.Verdict != VerdictNA {
			row[3] = signedPct(m.Diff)
			row[4] = signedPct(m.CILo) + " to " + signedPct(m.CIHi)
		} else {
			row[1], row[2] = "-", "-"
		}
		rows = append(rows, row)
	}
	return rows
}

// deploymentRows are the keys either run states, side by side: status
// "DIFFERS" where both state different values.
func (r *Result) deploymentRows() [][]string {
	var rows [][]string
	for _, k := range r.Deployments.Keys {
		if k.Trace == nil && k.Sim == nil {
			continue
		}
		status := map[string]string{report.KeyMatched: "same", report.KeyMismatched: "DIFFERS",
			report.KeyDefaulted: "A does not say", report.KeyUnchecked: "B does not say"}[k.Status]
		rows = append(rows, []string{k.Key, tracev2.FormatValue(k.Trace), tracev2.FormatValue(k.Sim), status})
	}
	return rows
}

var deploymentHeader = []string{"deployment", "A", "B", "status"}

func (r *Result) text() string {
	var b strings.Builder
	b.WriteString("calibrate compare: B against A\n")
	for _, l := range r.intro() {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "\n%s\n", r.Headline())
	for _, f := range r.findings() {
		b.WriteString("  " + f + "\n")
	}
	right := []bool{false, true, true, true, true, true, false}
	b.WriteString("\n" + strings.TrimSuffix(render.TextTable(metricHeader, r.metricRows(), right), "\n") + "\n")
	if rows := r.deploymentRows(); len(rows) > 0 {
		b.WriteString("\n" + strings.TrimSuffix(render.TextTable(deploymentHeader, rows, []bool{false, false, false, false}), "\n") + "\n")
	} else {
		b.WriteString("\ndeployments: neither trace states its deployment\n")
	}
	r.notes(&b, "")
	return b.String()
}

// notes writes the warnings and the gates' failures, each line prefixed.
func (r *Result) notes(b *strings.Builder, bullet string) {
	if len(r.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, w := range r.Warnings {
			b.WriteString(bullet + "  " + w + "\n")
		}
	}
	var failed []string
	for _, g := range r.Gates {
		if !g.Passed {
			failed = append(failed, g.Check+" ("+g.Metric+")")
		}
	}
	if len(r.Gates) > 0 {
		if len(failed) == 0 {
			fmt.Fprintf(b, "\ngates: %d checks passed\n", len(r.Gates))
			return
		}
		b.WriteString("\ngates FAILED:\n")
		for _, f := range failed {
			b.WriteString(bullet + "  " + f + "\n")
		}
	}
}

// mdCell escapes a Markdown table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func mdTable(b *strings.Builder, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = mdCell(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

func (r *Result) markdown() string {
	var b strings.Builder
	b.WriteString("## calibrate compare: B against A\n\n")
	fmt.Fprintf(&b, "**%s**\n\n", r.Headline())
	for _, f := range r.findings() {
		b.WriteString("- " + f + "\n")
	}
	b.WriteString("\n")
	for _, l := range r.intro() {
		b.WriteString("- " + mdCell(l) + "\n")
	}
	b.WriteString("\n")
	mdTable(&b, metricHeader, r.metricRows())
	if rows := r.deploymentRows(); len(rows) > 0 {
		b.WriteString("\n")
		mdTable(&b, deploymentHeader, rows)
	}
	r.notes(&b, "-")
	return b.String()
}
