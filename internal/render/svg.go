package render

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"servesim/internal/quantile"
)

// Okabe–Ito colours, distinct for colour-blind readers. Real and sim take
// the first two everywhere (blue, vermillion); series take them in turn.
const (
	Blue       = "#0072B2"
	Vermillion = "#D55E00"
	DashSim    = "6 3" // the sim side's dash, beside the real side's solid line
	SLORed     = "#C00000"
)

// Palette is the series colours in the order they are given out.
var Palette = [...]string{Blue, Vermillion, "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// Frame is a chart's outer size and the margins around its plotting area.
type Frame struct {
	W, H                     float64
	Left, Top, Right, Bottom float64
}

// X0 and X1 are the plotting area's left and right pixels, Y0 its bottom
// pixel and Y1 its top pixel.
func (f Frame) X0() float64 { return f.Left }
func (f Frame) X1() float64 { return f.W - f.Right }
func (f Frame) Y0() float64 { return f.H - f.Bottom }
func (f Frame) Y1() float64 { return f.Top }

// Open starts an SVG with its accessible title and description, a clip
// path of the plotting area (id-clip) and its background.
func Open(b *strings.Builder, f Frame, id, title, desc string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-labelledby="%s-t %s-d">`,
		Px(f.W), Px(f.H), Px(f.W), Px(f.H), id, id)
	fmt.Fprintf(b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, id, Esc(title), id, Esc(desc))
	fmt.Fprintf(b, `<defs><clipPath id="%s-clip"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>`,
		id, Px(f.X0()), Px(f.Y1()), Px(f.X1()-f.X0()), Px(f.Y0()-f.Y1()))
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" class="plotbg"/>`, Px(f.X0()), Px(f.Y1()), Px(f.X1()-f.X0()), Px(f.Y0()-f.Y1()))
}

// Axes draws grid lines, ticks and labels for x and y, the frame and the
// axis titles.
func Axes(b *strings.Builder, f Frame, x, y Axis, xTitle, yTitle string) {
	for _, t := range x.Ticks() {
		p := x.At(t)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid"/>`, Px(p), Px(f.Y1()), Px(p), Px(f.Y0()))
		fmt.Fprintf(b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s</text>`, Px(p), Px(f.Y0()+14), Esc(x.Label(t)))
	}
	for _, t := range y.Ticks() {
		p := y.At(t)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid"/>`, Px(f.X0()), Px(p), Px(f.X1()), Px(p))
		fmt.Fprintf(b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, Px(f.X0()-4), Px(p+3.5), Esc(y.Label(t)))
	}
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" class="frame"/>`, Px(f.X0()), Px(f.Y1()), Px(f.X1()-f.X0()), Px(f.Y0()-f.Y1()))
	xTitleY := f.Y0() + 32
	fmt.Fprintf(b, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s</text>`, Px((f.X0()+f.X1())/2), Px(xTitleY), Esc(xTitle))
	fmt.Fprintf(b, `<text x="12" y="%s" class="axis" text-anchor="middle" transform="rotate(-90 12 %s)">%s</text>`,
		Px((f.Y0()+f.Y1())/2), Px((f.Y0()+f.Y1())/2), Esc(yTitle))
}

// Key is one legend entry: a line (Dash "" for solid), a dot, or a glyph.
type Key struct {
	Label, Color, Dash string
	Dot                bool   // a filled dot instead of a line
	Glyph              string // a character instead of a line (× for a missing point)
}

// legendRow and legendChar are the legend's line height and the width of
// one of its characters (11 px system sans), for layout.
const (
	legendRow  = 16.0
	legendChar = 6.3
)

// LegendHeight is the height the legend of keys takes below a plotting
// area width px wide.
func LegendHeight(keys []Key, width float64) float64 {
	if len(keys) == 0 {
		return 0
	}
	cols, _ := legendColumns(keys, width)
	rows := (len(keys) + cols - 1) / cols
	return float64(rows)*legendRow + 6
}

func legendColumns(keys []Key, width float64) (cols int, colW float64) {
	longest := 0
	for _, k := range keys {
		longest = max(longest, len([]rune(k.Label)))
	}
	colW = 34 + legendChar*float64(longest) + 12
	cols = max(1, min(len(keys), int(width/colW)))
	return cols, colW
}

// Legend draws keys in columns from (x, y) downwards, outside the
// plotting area so that it never covers data or reference lines.
func Legend(b *strings.Builder, x, y, width float64, keys []Key) {
	cols, colW := legendColumns(keys, width)
	for i, k := range keys {
		xx := x + float64(i%cols)*colW
		yy := y + float64(i/cols)*legendRow + 8
		switch {
		case k.Glyph != "":
			fmt.Fprintf(b, `<text x="%s" y="%s" class="legend" text-anchor="middle" fill="%s">%s</text>`, Px(xx+12), Px(yy+4), k.Color, Esc(k.Glyph))
		case k.Dot:
			fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.8" fill="%s"/>`, Px(xx+12), Px(yy), k.Color)
		default:
			dash := ""
			if k.Dash != "" {
				dash = ` stroke-dasharray="` + k.Dash + `"`
			}
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"%s/>`, Px(xx), Px(yy), Px(xx+24), Px(yy), k.Color, dash)
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" class="legend">%s</text>`, Px(xx+30), Px(yy+4), Esc(k.Label))
	}
}

// box is a rectangle in pixels.
type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(o box) bool {
	return a.x0 < o.x1 && o.x0 < a.x1 && a.y0 < o.y1 && o.y0 < a.y1
}

// labelChar is the width of a 10 px label character, for layout.
const labelChar = 5.8

// Labeller places text labels so that none overlaps another, a point
// it was told of, or the edge of the plotting area: each label tries its
// candidate positions in turn and is left out when none is free.
type Labeller struct {
	area box
	used []box
}

// NewLabeller returns a labeller for the plotting area of f.
func NewLabeller(f Frame) *Labeller {
	return &Labeller{area: box{f.X0() + 1, f.Y1() + 1, f.X1() - 1, f.Y0() - 1}}
}

// Occupy marks a point (a marker of radius r) that labels must not cover.
func (l *Labeller) Occupy(x, y, r float64) {
	l.used = append(l.used, box{x - r, y - r, x + r, y + r})
}

// Place is where a label goes: its anchor point and text-anchor.
type Place struct {
	X, Y   float64
	Anchor string // start, middle or end
}

// Around gives the usual candidates for a point's label: above, below,
// right, left.
func Around(x, y float64) []Place {
	return []Place{{x, y - 7, "middle"}, {x, y + 15, "middle"}, {x + 7, y + 4, "start"}, {x - 7, y + 4, "end"}}
}

// Put places text at the first free candidate and reports where; ok is
// false when every candidate was taken (the label is then not drawn).
func (l *Labeller) Put(text string, cands []Place) (Place, bool) {
	w := labelChar * float64(len([]rune(text)))
	for _, c := range cands {
		bx := box{c.X, c.Y - 9, c.X + w, c.Y + 2}
		switch c.Anchor {
		case "middle":
			bx.x0, bx.x1 = c.X-w/2, c.X+w/2
		case "end":
			bx.x0, bx.x1 = c.X-w, c.X
		}
		if bx.x0 < l.area.x0 || bx.x1 > l.area.x1 || bx.y0 < l.area.y0 || bx.y1 > l.area.y1 {
			continue
		}
		free := true
		for _, u := range l.used {
			if bx.overlaps(u) {
				free = false
				break
			}
		}
		if free {
			l.used = append(l.used, bx)
			return c, true
		}
	}
	return Place{}, false
}

// Text writes a label at a place, in colour, with a white halo that keeps
// it legible over grid lines and curves.
func Text(b *strings.Builder, p Place, color, text string) {
	fmt.Fprintf(b, `<text x="%s" y="%s" class="label" text-anchor="%s" fill="%s">%s</text>`, Px(p.X), Px(p.Y), p.Anchor, color, Esc(text))
}

// RobustHigh is the top of a y range that one outlier cannot stretch: the
// largest value within Tukey's far-out fence (Q3 + 3·IQR of the finite
// values), or the largest value when none lies beyond the fence or there
// are fewer than four values. clipped reports whether a value lies above.
func RobustHigh(vals []float64) (hi float64, clipped bool) {
	var xs []float64
	for _, v := range vals {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	top := maxOf(xs)
	if len(xs) < 4 {
		return top, false
	}
	q1, q3 := quartiles(xs)
	fence := q3 + 3*(q3-q1)
	hi = math.Inf(-1)
	for _, v := range xs {
		if v <= fence {
			hi = math.Max(hi, v)
		}
	}
	// A value just past the fence is no outlier worth a broken axis.
	if top <= fence || top <= 1.5*hi {
		return top, false
	}
	return hi, true
}

func quartiles(xs []float64) (q1, q3 float64) {
	s := slices.Clone(xs)
	slices.Sort(s)
	return quantile.Sorted(s, 25), quantile.Sorted(s, 75)
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			m = math.Max(m, x)
		}
	}
	return m
}
