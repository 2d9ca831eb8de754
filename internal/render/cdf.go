package render

import (
	"fmt"
	"math"
	"strings"

	"servesim/internal/quantile"
)

// maxCDFPoints bounds the points drawn of one empirical CDF.
const maxCDFPoints = 1000

// CDF is a chart of two samples' empirical CDFs on one latency axis (µs):
// the first in blue, solid, the second in vermillion, dashed, p50 and p99
// marked by dotted lines with a dot where each curve crosses them.
type CDF struct {
	ID, Title, Desc string
	XTitle          string
	Names           [2]string    // legend texts
	Sorted          [2][]float64 // each sample, sorted ascending
}

// CDFPoints thins sorted values to at most 1,000 points at evenly spaced
// ranks and returns them with their empirical CDF value (i+1)/n.
func CDFPoints(sorted []float64) (xs, ys []float64) {
	n := len(sorted)
	k := min(n, maxCDFPoints)
	for j := range k {
		i := j
		if n > maxCDFPoints {
			i = int(math.Round(float64(j) * float64(n-1) / float64(maxCDFPoints-1)))
		}
		xs = append(xs, sorted[i])
		ys = append(ys, float64(i+1)/float64(n))
	}
	return xs, ys
}

func (c CDF) keys() []Key {
	return []Key{{Label: c.Names[0], Color: Blue}, {Label: c.Names[1], Color: Vermillion, Dash: DashSim}}
}

// LogScale reports whether the chart's x axis is logarithmic, for its
// description.
func (c CDF) LogScale() bool {
	return LatencyAxis(0, 1, c.Sorted[0], c.Sorted[1]).Log
}

// SVG draws the chart.
func (c CDF) SVG() string {
	f := Frame{W: 390, Left: 68, Top: 14, Right: 26}
	f.Bottom = 42 + LegendHeight(c.keys(), f.W-f.Left-f.Right)
	f.H = 280 + f.Bottom
	x := LatencyAxis(f.X0(), f.X1(), c.Sorted[0], c.Sorted[1])
	y := Axis{Lo: 0, Hi: 1, P0: f.Y0(), P1: f.Y1()}
	var b strings.Builder
	Open(&b, f, c.ID, c.Title, c.Desc)
	Axes(&b, f, x, y, c.XTitle, "fraction of requests")
	for _, q := range []struct {
		v     float64
		label string
	}{{0.5, "p50"}, {0.99, "p99"}} {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="mark"/>`, Px(f.X0()), Px(y.At(q.v)), Px(f.X1()), Px(y.At(q.v)))
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, Px(f.X1()-3), Px(y.At(q.v)-3), q.label)
	}
	fmt.Fprintf(&b, `<g clip-path="url(#%s-clip)">`, c.ID)
	for i, side := range []struct {
		col  string
		dash string
	}{{Blue, ""}, {Vermillion, DashSim}} {
		vals := c.Sorted[i]
		xs, ys := CDFPoints(vals)
		var pts strings.Builder
		prevY := 0.0
		for i := range xs {
			xp := Px(x.At(xs[i]))
			fmt.Fprintf(&pts, "%s,%s %s,%s ", xp, Px(y.At(prevY)), xp, Px(y.At(ys[i])))
			prevY = ys[i]
		}
		dash := ""
		if side.dash != "" {
			dash = ` stroke-dasharray="` + side.dash + `"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, side.col, dash, strings.TrimSpace(pts.String()))
		for _, q := range []float64{50, 99} {
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3.5" fill="%s" stroke="#fff"/>`, Px(x.At(quantile.Sorted(vals, q))), Px(y.At(q/100)), side.col)
		}
	}
	b.WriteString(`</g>`)
	Legend(&b, f.X0(), f.Y0()+40, f.X1()-f.X0(), c.keys())
	b.WriteString(`</svg>`)
	return b.String()
}
