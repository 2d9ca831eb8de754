package report

import (
	"fmt"
	"strings"

	"servesim/internal/render"
)

// The per-class and per-tenant tables share one layout in text, Markdown
// and HTML: a row per tier, every cell "real / sim", "-" where a side has
// no value.

// tiersNote says how to read the tables.
const tiersNote = "Each cell is real / simulated. Attainment and goodput count the requests whose class has an SLO target; p99s are over the completed requests; refused, shed, expired and evicted are the requests let go before they ran (the simulated side's from --sim-metrics)."

func tierHeader(first string) []string {
	return []string{first, "requests", "completed", "attainment", "goodput rps", "ttft p99", "e2e p99", "refused", "shed", "expired", "evicted"}
}

func tierRight() []bool {
	return []bool{false, true, true, true, true, true, true, true, true, true, true}
}

// tierCells are the cells of rows (names unescaped).
func tierCells(rows []TierRow) [][]string {
	out := make([][]string, 0, len(rows))
	for _, t := range rows {
		r, s := &t.Real, &t.Sim
		pair := func(a, b string) string { return a + " / " + b }
		gw := func(g *GatewayCounts, f func(*GatewayCounts) int) string {
			if g == nil {
				return "-"
			}
			return fmt.Sprint(f(g))
		}
		cells := []string{t.Name, fmt.Sprint(r.Requests), pair(fmt.Sprint(r.Completed), fmt.Sprint(s.Completed)),
			pair(optPct(r.SLOAttainment), optPct(s.SLOAttainment)), pair(optRPS(r.GoodputRPS), optRPS(s.GoodputRPS)),
			pair(optMs(r.TTFTP99Ms), optMs(s.TTFTP99Ms)), pair(optMs(r.E2EP99Ms), optMs(s.E2EP99Ms))}
		for _, f := range []func(*GatewayCounts) int{
			func(g *GatewayCounts) int { return g.Refused }, func(g *GatewayCounts) int { return g.Shed },
			func(g *GatewayCounts) int { return g.Expired }, func(g *GatewayCounts) int { return g.Evicted },
		} {
			cells = append(cells, pair(gw(r.Gateway, f), gw(s.Gateway, f)))
		}
		out = append(out, cells)
	}
	return out
}

func optPct(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmtPct(*v)
}

func optRPS(v *float64) string {
	if v == nil {
		return "-"
	}
	return sig3(abs(*v))
}

func optMs(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmtDur(*v * 1000)
}

// tierTable is one table to draw: its title, its first column's name and
// its rows.
type tierTable struct {
	title, first string
	rows         []TierRow
}

// tables are the tables to draw, classes first.
func (t *Tiers) tables() []tierTable {
	var out []tierTable
	if len(t.Classes) > 0 {
		out = append(out, tierTable{"SLO classes", "class", t.Classes})
	}
	if len(t.Tenants) > 0 {
		out = append(out, tierTable{"Tenants", "tenant", t.Tenants})
	}
	return out
}

// tiersText is the text rendering; "" without tiers.
func (r *Report) tiersText() string {
	if r.Tiers == nil {
		return ""
	}
	var b strings.Builder
	for _, tb := range r.Tiers.tables() {
		b.WriteString(strings.ToLower(tb.title) + " (real / sim):\n")
		for _, line := range strings.SplitAfter(strings.TrimSuffix(table(tierHeader(tb.first), tierCells(tb.rows), tierRight()), "\n"), "\n") {
			b.WriteString("  " + line)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// mdTiers writes the Markdown section; nothing without tiers.
func (r *Report) mdTiers(b *strings.Builder) {
	if r.Tiers == nil {
		return
	}
	b.WriteString("## Tiers\n\n" + tiersNote + "\n\n")
	for _, tb := range r.Tiers.tables() {
		b.WriteString("### " + tb.title + "\n\n")
		rows := tierCells(tb.rows)
		for _, row := range rows {
			row[0] = mdEscape(row[0])
		}
		mdTable(b, tierHeader(tb.first), rows, tierRight())
		b.WriteString("\n")
	}
}

// htmlTiers writes the HTML section; nothing without tiers.
func (r *Report) htmlTiers(b *strings.Builder) {
	if r.Tiers == nil {
		return
	}
	b.WriteString("<h2>Tiers</h2>\n<p class=\"muted\">" + render.Esc(tiersNote) + "</p>\n")
	for _, tb := range r.Tiers.tables() {
		b.WriteString("<h3>" + render.Esc(tb.title) + "</h3>\n")
		render.Table(b, tierHeader(tb.first), tierCells(tb.rows), tierRight(), false)
	}
}
