package report

import (
	"strconv"

	"servesim/internal/render"
)

// The text, Markdown and HTML renderings format numbers the one way
// internal/render does; these names keep the call sites short.

// fmtDur renders a duration in µs with three significant digits (render.Dur).
func fmtDur(us float64) string { return render.Dur(us) }

// sig3 formats v ≥ 0 with three significant digits (render.Sig3).
func sig3(v float64) string { return render.Sig3(v) }

// fmtPct renders a fraction as a percentage with one decimal (render.Pct).
func fmtPct(f float64) string { return render.Pct(f) }

// fmtNum renders a plain number in its shortest form (render.Num).
func fmtNum(f float64) string { return render.Num(f) }

// fmtR renders Pearson r with three decimals.
func fmtR(r float64) string { return strconv.FormatFloat(r, 'f', 3, 64) }

// table lays out rows in columns two spaces apart (render.TextTable).
func table(header []string, rows [][]string, right []bool) string {
	return render.TextTable(header, rows, right)
}
