package render

import (
	"fmt"
	"html"
	"strings"
)

// CSS is the pages' only style sheet: inline, no fonts or images to fetch.
// Charts shrink with a narrow window (max-width) and wide tables scroll
// inside their box instead of widening the page.
const CSS = `body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#222;line-height:1.4}
h1{font-size:1.5em;margin:0 0 8px}h2{font-size:1.2em;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.tablewrap{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:6px 0 12px;font-size:.92em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}th{background:#f3f3f3}
.badge{display:inline-block;white-space:nowrap;padding:1px 8px;border-radius:9px;font-weight:600;font-size:.9em}
.excellent{background:#cfe8d6}.good{background:#dcebc4}.fair{background:#f6e3b4}.poor{background:#f3c4bd}
.flagged{background:#f3c4bd}.ok{background:#dcebc4}.not_assessed{background:#e6e6e6}
.banner{padding:8px 12px;border-radius:6px;margin:8px 0 16px;font-weight:600}.pass{background:#dcebc4}.fail{background:#f3c4bd}
.plots{display:flex;flex-wrap:wrap;gap:8px 24px;align-items:flex-start}h3{font-size:1em;margin:8px 0 2px}
svg{font-family:inherit;background:#fff;max-width:100%;height:auto}svg .plotbg{fill:#fafafa}svg .grid{stroke:#e2e2e2;stroke-width:1}
svg .frame{fill:none;stroke:#888;stroke-width:1}svg .tick{font-size:10px;fill:#444}svg .axis{font-size:11px;fill:#222}
svg .legend{font-size:11px;fill:#222}svg .mark{stroke:#777;stroke-width:1;stroke-dasharray:2 3}
svg .label{font-size:10px;paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}
svg .diag{stroke:#222;stroke-width:1.3}svg .band{fill:#999;fill-opacity:.18}svg .zero{stroke:#222;stroke-width:1.3}
svg .bar{fill:#0072B2;fill-opacity:.75}svg .bar.over{fill:#6a6a6a}
.muted{color:#666}ul{margin:4px 0 12px}.headline{font-size:1.1em;margin:4px 0 2px}`

// Esc escapes text for HTML.
func Esc(s string) string { return html.EscapeString(s) }

// PageHead writes the opening of a self-contained page up to its <h1>.
func PageHead(b *strings.Builder, title string) {
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(b, "<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", Esc(title), CSS)
	fmt.Fprintf(b, "<h1>%s</h1>\n", Esc(title))
}

// Table writes an HTML table in a box that scrolls sideways when the
// table is wider than the page; right[i] right-aligns column i. Cells are
// escaped unless raw (then they are HTML already).
func Table(b *strings.Builder, header []string, rows [][]string, right []bool, raw bool) {
	b.WriteString("<div class=\"tablewrap\"><table><thead><tr>")
	for i, h := range header {
		cls := ""
		if right[i] {
			cls = ` class="n"`
		}
		fmt.Fprintf(b, "<th%s>%s</th>", cls, Esc(h))
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
				c = Esc(c)
			}
			fmt.Fprintf(b, "<td%s>%s</td>", cls, c)
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table></div>\n")
}

// Badge is a coloured label; class names one of the style sheet's colours
// (excellent, good, fair, poor, flagged, ok, not_assessed).
func Badge(class, text string) string {
	return `<span class="badge ` + Esc(class) + `">` + Esc(text) + `</span>`
}
