package render

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Series is one set of points of a Plot: a line through them, or dots.
type Series struct {
	Name    string // legend text; "" leaves it out of the legend
	Color   string
	Dash    string
	X, Y    []float64
	Labels  []string  // the points' labels when they are labelled (""  for none); nil gives their y values
	Missing []float64 // x of points without a y (no steady state), marked × at the top
	Dots    bool      // dots only, no line
	Hollow  []bool    // a dot drawn hollow (e.g. missing an SLO)
	Faint   bool      // small translucent dots, for thousands of points
	// Lo and Hi, when as long as X, are each point's 90% interval, shaded
	// around the line (NaN: that end unbounded, or absent).
	Lo, Hi []float64
}

// Mark is a reference line across a plot: a bound (horizontal) or a
// knee (vertical), labelled.
type Mark struct {
	At    float64
	Label string
	Color string
}

// Plot is a chart of several series against one x axis. Its y range
// leaves out outliers (RobustHigh): a point above the range is drawn as ▲
// on the top edge with its value; a bound far above the data is named at
// the top instead of squashing the data to the bottom. Points are labelled
// when there are at most LabelPoints of them, labels never overlap, and the
// legend sits below the plotting area.
type Plot struct {
	ID, Title, Desc  string
	XTitle, YTitle   string
	XLatency         bool // x values are µs
	YLatency         bool // y values are µs; the axis may turn logarithmic
	Series           []Series
	HMarks, VMarks   []Mark
	Diagonal         bool   // draw y = x (served = offered)
	DiagonalLabel    string // its legend text
	MissingExplained string // legend text of the × markers
	LabelPoints      int    // label every point when there are at most this many; 0 means 12, -1 none
}

// maxLegend bounds the legend's entries; further series are drawn unnamed.
const maxLegend = 8

// markRoom is how far above the data's top a bound may lie and still
// set the y range: a bound further up is named at the top edge instead.
const markRoom = 2.5

// SVG draws the plot.
func (p *Plot) SVG() string {
	keys := p.keys()
	f := Frame{W: 430, Left: 68, Top: 14, Right: 18}
	f.Bottom = 42 + LegendHeight(keys, f.W-f.Left-f.Right)
	f.H = 254 + f.Bottom
	x, y, far := p.axes(f)
	var b strings.Builder
	Open(&b, f, p.ID, p.Title, p.Desc)
	Axes(&b, f, x, y, p.XTitle, p.YTitle)
	lab := NewLabeller(f)
	fmt.Fprintf(&b, `<g clip-path="url(#%s-clip)">`, p.ID)
	if p.Diagonal {
		hi := math.Min(x.Hi, y.Hi)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="diag" stroke-dasharray="2 3"/>`, Px(x.At(0)), Px(y.At(0)), Px(x.At(hi)), Px(y.At(hi)))
	}
	for _, m := range p.HMarks {
		if m.At <= y.Hi {
			fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5" stroke-dasharray="7 4"/>`,
				Px(f.X0()), Px(y.At(m.At)), Px(f.X1()), Px(y.At(m.At)), m.Color)
		}
	}
	for _, m := range p.VMarks {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.2" stroke-dasharray="2 3"/>`,
			Px(x.At(m.At)), Px(f.Y1()), Px(x.At(m.At)), Px(f.Y0()), m.Color)
	}
	for _, s := range p.Series {
		drawBand(&b, s, x, y, f)
	}
	for _, s := range p.Series {
		drawSeries(&b, s, x, y, f, lab)
	}
	b.WriteString(`</g>`)
	p.labels(&b, f, x, y, far, lab)
	Legend(&b, f.X0(), f.Y0()+40, f.X1()-f.X0(), keys)
	b.WriteString(`</svg>`)
	return b.String()
}

// axes picks the x and y axes; far are the bounds above the y range.
func (p *Plot) axes(f Frame) (x, y Axis, far []Mark) {
	var xs, ys []float64
	for _, s := range p.Series {
		xs = append(append(xs, s.X...), s.Missing...)
		ys = append(ys, s.Y...)
	}
	x = Axis{P0: f.X0(), P1: f.X1(), Latency: p.XLatency}
	x.Linear(0, math.Max(maxOf(xs), 0)*1.04) // room for the last point's marker
	hi, _ := RobustHigh(ys)
	inRange := []float64{}
	for _, v := range ys {
		if v <= hi {
			inRange = append(inRange, v)
		}
	}
	top := hi
	for _, m := range p.HMarks {
		if hi <= 0 || m.At <= markRoom*hi {
			inRange = append(inRange, m.At*1.08) // room above a bound for its label
			top = math.Max(top, m.At*1.08)
		} else {
			far = append(far, m)
		}
	}
	if p.YLatency {
		y = LatencyAxis(f.Y0(), f.Y1(), inRange)
	} else {
		y = Axis{P0: f.Y0(), P1: f.Y1()}
		y.Linear(0, math.Max(top, 0))
	}
	return x, y, far
}

func (p *Plot) keys() []Key {
	var keys []Key
	named := 0
	for _, s := range p.Series {
		if s.Name == "" {
			continue
		}
		named++
		if named <= maxLegend {
			keys = append(keys, Key{Label: s.Name, Color: s.Color, Dash: s.Dash, Dot: s.Dots})
		}
	}
	if named > maxLegend {
		keys = append(keys, Key{Label: fmt.Sprintf("%d more series, unnamed", named-maxLegend), Color: "#777", Glyph: "…"})
	}
	if p.Diagonal && p.DiagonalLabel != "" {
		keys = append(keys, Key{Label: p.DiagonalLabel, Color: "#222", Dash: "2 3"})
	}
	for _, s := range p.Series {
		if len(s.Missing) > 0 && p.MissingExplained != "" {
			keys = append(keys, Key{Label: p.MissingExplained, Color: "#777", Glyph: "×"})
			break
		}
	}
	if _, clipped := RobustHigh(p.allY()); clipped {
		keys = append(keys, Key{Label: "above the axis (its value beside)", Color: "#555", Glyph: "▲"})
	}
	return keys
}

func (p *Plot) allY() []float64 {
	var ys []float64
	for _, s := range p.Series {
		ys = append(ys, s.Y...)
	}
	return ys
}

// labels writes, in order of importance, the labels of the bounds, of the
// points above the range, and of every point when they are few.
func (p *Plot) labels(b *strings.Builder, f Frame, x, y Axis, far []Mark, lab *Labeller) {
	for _, m := range p.HMarks {
		if m.At > y.Hi {
			continue
		}
		yy := y.At(m.At)
		if pl, ok := lab.Put(m.Label, []Place{{f.X1() - 4, yy - 4, "end"}, {f.X1() - 4, yy + 12, "end"}, {f.X0() + 4, yy - 4, "start"}, {f.X0() + 4, yy + 12, "start"}}); ok {
			Text(b, pl, m.Color, m.Label)
		}
	}
	for i, m := range far {
		t := "↑ " + m.Label + " (far above)"
		if pl, ok := lab.Put(t, []Place{{f.X1() - 4, f.Y1() + 12 + 12*float64(i), "end"}, {f.X0() + 4, f.Y1() + 12 + 12*float64(i), "start"}}); ok {
			Text(b, pl, m.Color, t)
		}
	}
	for _, m := range p.VMarks {
		xx := x.At(m.At)
		if pl, ok := lab.Put(m.Label, []Place{{xx + 3, f.Y0() - 6, "start"}, {xx - 3, f.Y0() - 6, "end"}, {xx + 3, f.Y0() - 20, "start"}}); ok {
			Text(b, pl, m.Color, m.Label)
		}
	}
	total := 0
	for _, s := range p.Series {
		if !s.Faint {
			total += len(s.X)
		}
	}
	limit := p.LabelPoints
	if limit == 0 {
		limit = 12
	}
	for _, s := range p.Series {
		for i := range s.X {
			above := s.Y[i] > y.Hi
			if s.Faint || (!above && total > limit) {
				continue
			}
			t, ok := s.value(i, y)
			if !ok {
				continue
			}
			px, py := x.At(s.X[i]), math.Max(y.At(s.Y[i]), f.Y1()+6)
			if above {
				t = "▲ " + t
				if s.Labels != nil {
					t += " " + s.yText(i, y)
				}
			}
			if pl, ok := lab.Put(t, Around(px, py)); ok {
				Text(b, pl, s.Color, t)
			}
		}
	}
}

// value is point i's label: its own when the series has labels (none
// when that is ""), else its y value with the axis's unit.
func (s Series) value(i int, y Axis) (string, bool) {
	if s.Labels != nil {
		return s.Labels[i], s.Labels[i] != ""
	}
	return s.yText(i, y), true
}

// yText is point i's y value with the axis's unit, to three digits.
func (s Series) yText(i int, y Axis) string {
	if y.Latency {
		return TickDur(roundSig(s.Y[i], 3))
	}
	return Num(roundSig(s.Y[i], 3))
}

func drawSeries(b *strings.Builder, s Series, x, y Axis, f Frame, lab *Labeller) {
	// A point above the range sits on the top edge, as a triangle.
	at := func(i int) (float64, float64, bool) {
		if s.Y[i] > y.Hi {
			return x.At(s.X[i]), f.Y1() + 5, true
		}
		return x.At(s.X[i]), y.At(s.Y[i]), false
	}
	switch {
	case s.Faint:
		fmt.Fprintf(b, `<g fill="%s" fill-opacity="0.35">`, s.Color)
		for i := range s.X {
			px, py, _ := at(i)
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="1.8"/>`, Px(px), Px(py))
		}
		b.WriteString(`</g>`)
	case !s.Dots && len(s.X) > 0:
		var pts strings.Builder
		for i := range s.X {
			px, py, _ := at(i)
			fmt.Fprintf(&pts, "%s,%s ", Px(px), Px(py))
		}
		dash := ""
		if s.Dash != "" {
			dash = ` stroke-dasharray="` + s.Dash + `"`
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, s.Color, dash, strings.TrimSpace(pts.String()))
	}
	if s.Faint {
		return
	}
	for i := range s.X {
		px, py, above := at(i)
		lab.Occupy(px, py, 4)
		switch {
		case above:
			fmt.Fprintf(b, `<path d="M%s %sl5 8h-10z" fill="%s"/>`, Px(px), Px(py-4), s.Color)
		case s.Dots:
			fill := s.Color
			if i < len(s.Hollow) && s.Hollow[i] {
				fill = "#fff"
			}
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.8" fill="%s" stroke="%s" stroke-width="1.5"/>`, Px(px), Px(py), fill, s.Color)
		default:
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="2.6" fill="%s"/>`, Px(px), Px(py), s.Color)
		}
	}
	for _, m := range s.Missing {
		lab.Occupy(x.At(m), f.Y1()+7, 5)
		fmt.Fprintf(b, `<text x="%s" y="%s" class="tick" text-anchor="middle" fill="%s">×<title>%s: no steady state</title></text>`,
			Px(x.At(m)), Px(f.Y1()+10), s.Color, Esc(Num(roundSig(m, 4))))
	}
}

// drawBand shades the interval of a series: a polygon along the high ends
// (the top of the plot where a high end is unbounded), back along the low
// ends (the value itself where a low end is absent).
func drawBand(b *strings.Builder, s Series, x, y Axis, f Frame) {
	if len(s.Lo) != len(s.X) || len(s.Hi) != len(s.X) || len(s.X) == 0 {
		return
	}
	var pts strings.Builder
	for i := range s.X {
		top := f.Y1()
		if !math.IsNaN(s.Hi[i]) && !math.IsInf(s.Hi[i], 0) {
			top = math.Max(f.Y1(), y.At(s.Hi[i]))
		}
		fmt.Fprintf(&pts, "%s,%s ", Px(x.At(s.X[i])), Px(top))
	}
	for i := len(s.X) - 1; i >= 0; i-- {
		lo := s.Y[i]
		if !math.IsNaN(s.Lo[i]) && !math.IsInf(s.Lo[i], 0) {
			lo = s.Lo[i]
		}
		fmt.Fprintf(&pts, "%s,%s ", Px(x.At(s.X[i])), Px(y.At(lo)))
	}
	fmt.Fprintf(b, `<polygon class="band" fill="%s" fill-opacity="0.15" stroke="none" points="%s"><title>%s: 90%% interval</title></polygon>`,
		s.Color, strings.TrimSpace(pts.String()), html.EscapeString(s.Name))
}
