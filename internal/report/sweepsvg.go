package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Plots of a sweep's HTML page, drawn with the calibration report's axes,
// frames and legends. Series take the Okabe–Ito colours in turn (distinct
// for colour-blind readers); statistics of one series differ by dash.
var palette = []string{colReal, colSim, "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// maxLegend bounds the legend's entries; further series are drawn unnamed.
const maxLegend = 8

// series is one line of a plot: y against x, with the x of the points that
// have no y (an unstable run) marked at the top of the plot.
type series struct {
	name    string
	color   string
	dash    string
	x, y    []float64
	missing []float64
	dots    bool // draw each point, not a line
	hollow  []bool
	// lo and hi, when set, are the interval of each y (NaN: an end that
	// is absent; a high end absent is unbounded), drawn as a shaded band.
	lo, hi []float64
}

// mark is a reference line across the plot: a bound (horizontal) or a
// knee (vertical).
type mark struct {
	at    float64
	label string
	color string
}

// linePlot is a plot of several series against one x axis.
type linePlot struct {
	id, title, desc  string
	xTitle, yTitle   string
	xLatency         bool // x values are µs (labels as durations)
	yLatency         bool // y values are µs; the axis may turn logarithmic
	series           []series
	hmarks, vmarks   []mark
	diagonal         bool   // draw y = x (served = offered)
	diagonalLabel    string // its legend text
	missingExplained string // legend text of the markers of missing points
}

func (p *linePlot) svg() string {
	f := frame{w: 430, h: 320, left: 68, top: 14, right: 18, bott: 40}
	var xs, ys []float64
	for _, s := range p.series {
		xs = append(append(xs, s.x...), s.missing...)
		ys = append(ys, s.y...)
		for _, h := range s.hi {
			if isFinite(h) {
				ys = append(ys, h)
			}
		}
	}
	for _, m := range p.hmarks {
		ys = append(ys, m.at*1.15) // room above a bound for its label
	}
	x := axis{p0: f.x0(), p1: f.x1(), isLatency: p.xLatency}
	x.linear(0, maxOf(xs)*1.04) // room for the last point's marker
	var y axis
	if p.yLatency {
		y = latencyAxis(f.y0(), f.y1(), ys)
	} else {
		y = axis{p0: f.y0(), p1: f.y1()}
		y.linear(0, maxOf(ys))
	}
	var b strings.Builder
	svgOpen(&b, f, p.id, p.title, p.desc)
	axes(&b, f, x, y, p.xTitle, p.yTitle)
	fmt.Fprintf(&b, `<g clip-path="url(#%s-clip)">`, p.id)
	if p.diagonal {
		hi := math.Min(x.hi, y.hi)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="diag" stroke-dasharray="2 3"/>`, px(x.at(0)), px(y.at(0)), px(x.at(hi)), px(y.at(hi)))
	}
	for _, m := range p.hmarks {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="7 4"/>`,
			px(f.x0()), px(y.at(m.at)), px(f.x1()), px(y.at(m.at)), m.color)
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end" fill="%s">%s</text>`, px(f.x1()-4), px(y.at(m.at)-4), m.color, html.EscapeString(m.label))
	}
	for _, m := range p.vmarks {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.2" stroke-dasharray="2 3"/>`,
			px(x.at(m.at)), px(f.y1()), px(x.at(m.at)), px(f.y0()), m.color)
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="start" fill="%s">%s</text>`, px(x.at(m.at)+3), px(f.y0()-18), m.color, html.EscapeString(m.label))
	}
	for _, s := range p.series {
		drawBand(&b, s, x, y, f)
	}
	for _, s := range p.series {
		drawSeries(&b, s, x, y, f)
	}
	b.WriteString(`</g>`)
	var items [][3]string
	for i, s := range p.series {
		if s.name != "" && i < maxLegend {
			items = append(items, [3]string{s.name, s.color, s.dash})
		}
	}
	if p.diagonal && p.diagonalLabel != "" {
		items = append(items, [3]string{p.diagonalLabel, "#222", "2 3"})
	}
	legend(&b, f.x0()+10, f.y1()+14, items)
	if p.missingExplained != "" {
		for _, s := range p.series {
			if len(s.missing) > 0 {
				fmt.Fprintf(&b, `<text x="%s" y="%s" class="legend" fill="#777">× %s</text>`, px(f.x0()+16), px(f.y1()+18+16*float64(len(items))), html.EscapeString(p.missingExplained))
				break
			}
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

func drawSeries(b *strings.Builder, s series, x, y axis, f frame) {
	if s.dots {
		for i := range s.x {
			fill := s.color
			if i < len(s.hollow) && s.hollow[i] {
				fill = "#fff"
			}
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.8" fill="%s" stroke="%s" stroke-width="1.5"/>`, px(x.at(s.x[i])), px(y.at(s.y[i])), fill, s.color)
		}
	} else if len(s.x) > 0 {
		var pts strings.Builder
		for i := range s.x {
			fmt.Fprintf(&pts, "%s,%s ", px(x.at(s.x[i])), px(y.at(s.y[i])))
		}
		dash := ""
		if s.dash != "" {
			dash = ` stroke-dasharray="` + s.dash + `"`
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, s.color, dash, strings.TrimSpace(pts.String()))
		for i := range s.x {
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="2.6" fill="%s"/>`, px(x.at(s.x[i])), px(y.at(s.y[i])), s.color)
		}
	}
	for _, m := range s.missing {
		fmt.Fprintf(b, `<text x="%s" y="%s" class="tick" text-anchor="middle" fill="%s">×<title>%s: no steady state</title></text>`,
			px(x.at(m)), px(f.y1()+10), s.color, html.EscapeString(fmtRate(m)+" req/s"))
	}
}

// drawBand shades the interval of a series: a polygon along the high
// ends (the top of the plot where a high end is unbounded), back along the
// low ends (the value itself where a low end is absent).
func drawBand(b *strings.Builder, s series, x, y axis, f frame) {
	if len(s.lo) != len(s.x) || len(s.hi) != len(s.x) || len(s.x) == 0 {
		return
	}
	var pts strings.Builder
	for i := range s.x {
		top := f.y1()
		if isFinite(s.hi[i]) {
			top = y.at(s.hi[i])
		}
		fmt.Fprintf(&pts, "%s,%s ", px(x.at(s.x[i])), px(top))
	}
	for i := len(s.x) - 1; i >= 0; i-- {
		lo := s.y[i]
		if isFinite(s.lo[i]) {
			lo = s.lo[i]
		}
		fmt.Fprintf(&pts, "%s,%s ", px(x.at(s.x[i])), px(y.at(lo)))
	}
	fmt.Fprintf(b, `<polygon class="band" fill="%s" fill-opacity="0.15" stroke="none" points="%s"><title>%s: 90%% interval</title></polygon>`,
		s.color, strings.TrimSpace(pts.String()), html.EscapeString(s.name))
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		if isFinite(x) {
			m = math.Max(m, x)
		}
	}
	return m
}
