package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// Human outputs share these pieces; all are deterministic (sorted maps, no clock)
// and ASCII except where a name from the inputs is not.

func metricHeader() []string {
	return []string{"metric", "n", "real p50", "sim p50", "real p99", "sim p99", "MAPE", "r", "bias", "grade"}
}

func metricRight() []bool {
	return []bool{false, true, true, true, true, true, true, true, false, false}
}

func metricRow(name string, c *Comparison) []string {
	w, q := &c.WorkloadLevel, &c.RequestLevel
	bias := q.BiasDirection
	if bias == "" {
		bias = "-"
	}
	return []string{name, fmt.Sprint(c.Count), fmtDur(w.RealP50), fmtDur(w.SimP50), fmtDur(w.RealP99), fmtDur(w.SimP99),
		fmtPct(q.MAPE), fmtR(q.PearsonR), bias, q.Quality}
}

// metricRows are the graded metrics, then those the capture could not
// measure (a non-streamed one has no TPOT or ITL), said so rather than
// graded.
func (r *Report) metricRows() [][]string {
	var rows [][]string
	for _, name := range r.MetricNames() {
		rows = append(rows, metricRow(name, r.Metrics[name]))
	}
	for _, name := range metricNames() {
		if why := r.absent[name]; strings.HasPrefix(why, notMeasured) {
			rows = append(rows, []string{name, "0", "-", "-", "-", "-", "-", "-", "-", "not measured"})
		}
	}
	return rows
}

// notMeasured starts the reason of a metric the real side did not measure.
const notMeasured = "not measured: "

func (r *Report) summaryLine() string {
	t := &r.TraceInfo
	s := fmt.Sprintf("calibrate: %d matched, %d warm-up, %d non-ok, %d unmatched real, %d unmatched sim, %d token mismatches",
		t.MatchedPairs, t.WarmUpExcluded, t.ExcludedNonOK, t.UnmatchedReal, t.UnmatchedSim, t.TokenMismatches)
	if t.InvalidTiming > 0 {
		s += fmt.Sprintf(", %d invalid timing", t.InvalidTiming)
	}
	if t.ITLDropped > 0 {
		s += fmt.Sprintf(", %d itl dropped", t.ITLDropped)
	}
	return s
}

func fmtRPS(x float64) string { return sig3(abs(x)) + " rps" }

func (r *Report) goodputLines() []string {
	if r.Goodput == nil {
		return nil
	}
	var out []string
	for _, class := range slices.Sorted(maps.Keys(r.Goodput.PerClass)) {
		g := r.Goodput.PerClass[class]
		out = append(out, fmt.Sprintf("goodput %s: real %s (%s)  sim %s (%s)  n=%d", class,
			fmtPct(g.RealSLOAttainment), fmtRPS(g.RealGoodputRPS), fmtPct(g.SimSLOAttainment), fmtRPS(g.SimGoodputRPS), g.Count))
	}
	return out
}

func within(ok bool) string {
	if ok {
		return "within"
	}
	return "outside"
}

func (r *Report) ttftToleranceText() string {
	t := r.TTFTTolerance
	if t == nil {
		return ""
	}
	rel := "<="
	if !t.Within {
		rel = ">"
	}
	return fmt.Sprintf("ttft tolerance: MAPE %s %s %s (%s)", fmtPct(t.MAPE), rel, fmtPct(t.Threshold), within(t.Within))
}

func (r *Report) hitRateText() string {
	h := r.HitRate
	if h == nil {
		return ""
	}
	rel := "<="
	if !h.Within {
		rel = ">"
	}
	return fmt.Sprintf("hit rate: |%s - %s| = %s pp %s %s pp (%s)", fmtPct(h.SimHitRate), fmtPct(h.RealHitRate),
		fmtNum(round(h.AbsErrorPP, 2)), rel, fmtNum(h.TolerancePP), within(h.Within))
}

func round(x float64, decimals int) float64 {
	p := 1.0
	for range decimals {
		p *= 10
	}
	v := x * p
	if v < 0 {
		return -float64(int64(-v+0.5)) / p
	}
	return float64(int64(v+0.5)) / p
}

func (r *Report) windowText() string {
	var parts []string
	for _, w := range r.Validity.Windows {
		verb := "excluded"
		if w.Graded {
			verb = "graded"
		}
		parts = append(parts, fmt.Sprintf("%s %s: %d requests, %s to %s", verb, w.Label, w.Requests,
			fmtDur(float64(w.StartUs)), fmtDur(float64(w.EndUs))))
	}
	return "windows: " + strings.Join(parts, "; ")
}

func (r *Report) validitySummary() string {
	flagged := r.Validity.Flagged()
	var skipped []string
	for _, c := range r.Validity.Checks {
		if c.Status == StatusNotAssessed {
			skipped = append(skipped, c.Name)
		}
	}
	s := "validity: "
	if len(flagged) == 0 {
		s += "ok"
	} else {
		s += "FLAGGED " + strings.Join(flagged, ", ")
	}
	if len(skipped) > 0 {
		s += " (not assessed: " + strings.Join(skipped, ", ") + ")"
	}
	return s
}

func (r *Report) gateText() string {
	if r.Gate == nil {
		return ""
	}
	if r.Gate.Passed {
		return "gate: PASS"
	}
	return "gate: FAIL: " + strings.Join(r.Gate.Failures, "; ")
}

// WriteText writes the plain-text summary of docs/calibrate.md §11 (stdout default).
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	b.WriteString(r.summaryLine() + "\n")
	b.WriteString(table(metricHeader(), r.metricRows(), metricRight()))
	for _, l := range r.goodputLines() {
		b.WriteString(l + "\n")
	}
	b.WriteString(r.tiersText())
	verdict := r.ttftToleranceText()
	if h := r.hitRateText(); h != "" {
		verdict += "   " + h
	}
	if verdict != "" {
		b.WriteString(verdict + "\n")
	}
	b.WriteString(r.configHeadline() + "\n")
	if rows, more := r.configRows(false); len(rows) > 0 {
		tb := table(configHeader(), rows, make([]bool, 5))
		for _, line := range strings.SplitAfter(strings.TrimSuffix(tb, "\n"), "\n") {
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
		if more > 0 {
			fmt.Fprintf(&b, "  (%d more keys in the JSON report)\n", more)
		}
	}
	b.WriteString(r.validitySummary() + "\n")
	for _, c := range r.Validity.Checks {
		if c.Status == StatusFlagged {
			b.WriteString("  " + c.Name + ": " + c.Detail + "\n")
		}
	}
	b.WriteString(r.windowText() + "\n")
	b.WriteString(r.phasesText())
	if c := r.coverageText(); c != "" {
		b.WriteString(c + "\n")
	}
	if g := r.gateText(); g != "" {
		b.WriteString(g + "\n")
	}
	if _, err := io.WriteString(w, asciiOnly(b.String())); err != nil {
		return fmt.Errorf("report: write text: %w", err)
	}
	return nil
}

// asciiOnly replaces every non-ASCII rune (from names in the inputs) with '?', so
// the text survives any CI log.
func asciiOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r > 126 || (r < 32 && r != '\n' && r != '\t') {
			return '?'
		}
		return r
	}, s)
}
