package report

import (
	"cmp"
	"fmt"
	"html"
	"math"
	"slices"
	"strconv"
	"strings"

	"servesim/internal/quantile"
)

// Inline SVG plots for the HTML report (docs/calibrate.md §11). Real and sim use the
// Okabe–Ito blue and vermillion, distinct for colour-blind readers, and also
// differ in dash pattern (real solid, sim dashed).
const (
	colReal  = "#0072B2"
	colSim   = "#D55E00"
	dashSim  = "6 3"
	maxCDF   = 1000
	maxScat  = 5000
	histBins = 40 // 5-point bins from -100 to +100
)

// axis maps data values to pixels, linearly or logarithmically.
type axis struct {
	lo, hi    float64 // data domain (lo > 0 when log)
	log       bool
	p0, p1    float64 // pixel range
	isLatency bool    // tick labels as durations
}

func (a axis) at(v float64) float64 {
	lo, hi := a.lo, a.hi
	if a.log {
		v = math.Log10(math.Max(v, a.lo))
		lo, hi = math.Log10(a.lo), math.Log10(a.hi)
	}
	if hi == lo {
		return (a.p0 + a.p1) / 2
	}
	return a.p0 + (v-lo)/(hi-lo)*(a.p1-a.p0)
}

// latencyAxis picks a domain for values: logarithmic when max/min > 100.
func latencyAxis(p0, p1 float64, sets ...[]float64) axis {
	lo, hi := math.Inf(1), math.Inf(-1)
	minPos := math.Inf(1)
	n := 0
	for _, vals := range sets {
		n += len(vals)
		for _, v := range vals {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
			if v > 0 {
				minPos = math.Min(minPos, v)
			}
		}
	}
	a := axis{p0: p0, p1: p1, isLatency: true}
	if n == 0 {
		a.lo, a.hi = 0, 1
		return a
	}
	if !math.IsInf(minPos, 1) && hi/minPos > 100 {
		a.log = true
		a.lo = math.Pow(10, math.Floor(math.Log10(minPos)))
		a.hi = math.Pow(10, math.Ceil(math.Log10(hi)))
		return a
	}
	a.linear(lo, hi)
	return a
}

// linear sets a linear domain from 0 (or lo when negative) to hi, both
// rounded out to a nice step.
func (a *axis) linear(lo, hi float64) {
	lo = math.Min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	a.lo, a.hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 || !isFinite(x) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func (a axis) ticks() []float64 {
	var out []float64
	if a.log {
		decades := math.Log10(a.hi / a.lo)
		for d := a.lo; d <= a.hi*1.0001; d *= 10 {
			out = append(out, d)
			if decades <= 2 {
				for _, m := range []float64{2, 5} {
					if d*m < a.hi {
						out = append(out, d*m)
					}
				}
			}
		}
		slices.Sort(out)
		return out
	}
	step := niceStep((a.hi - a.lo) / 5)
	for v := a.lo; v <= a.hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

func (a axis) label(v float64) string {
	if a.isLatency {
		return fmtDur(v)
	}
	return fmtNum(round(v, 3))
}

func px(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// frame holds a plot's outer size and inner plotting area.
type frame struct {
	w, h                   float64
	left, top, right, bott float64
}

func (f frame) x0() float64 { return f.left }
func (f frame) x1() float64 { return f.w - f.right }
func (f frame) y0() float64 { return f.h - f.bott } // bottom pixel
func (f frame) y1() float64 { return f.top }

func svgOpen(b *strings.Builder, f frame, id, title, desc string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-labelledby="%s-t %s-d">`,
		px(f.w), px(f.h), px(f.w), px(f.h), id, id)
	fmt.Fprintf(b, `<title id="%s-t">%s</title><desc id="%s-d">%s</desc>`, id, html.EscapeString(title), id, html.EscapeString(desc))
	fmt.Fprintf(b, `<defs><clipPath id="%s-clip"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>`,
		id, px(f.x0()), px(f.y1()), px(f.x1()-f.x0()), px(f.y0()-f.y1()))
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" class="plotbg"/>`, px(f.x0()), px(f.y1()), px(f.x1()-f.x0()), px(f.y0()-f.y1()))
}

// axes draws grid lines, ticks and labels for x and y.
func axes(b *strings.Builder, f frame, x, y axis, xTitle, yTitle string) {
	for _, t := range x.ticks() {
		p := x.at(t)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid"/>`, px(p), px(f.y1()), px(p), px(f.y0()))
		fmt.Fprintf(b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s</text>`, px(p), px(f.y0()+14), html.EscapeString(x.label(t)))
	}
	for _, t := range y.ticks() {
		p := y.at(t)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid"/>`, px(f.x0()), px(p), px(f.x1()), px(p))
		fmt.Fprintf(b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, px(f.x0()-4), px(p+3.5), html.EscapeString(y.label(t)))
	}
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" class="frame"/>`, px(f.x0()), px(f.y1()), px(f.x1()-f.x0()), px(f.y0()-f.y1()))
	fmt.Fprintf(b, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s</text>`, px((f.x0()+f.x1())/2), px(f.h-6), html.EscapeString(xTitle))
	fmt.Fprintf(b, `<text x="12" y="%s" class="axis" text-anchor="middle" transform="rotate(-90 12 %s)">%s</text>`,
		px((f.y0()+f.y1())/2), px((f.y0()+f.y1())/2), html.EscapeString(yTitle))
}

func legend(b *strings.Builder, x, y float64, items [][3]string) {
	for i, it := range items { // label, colour, dash
		yy := y + float64(i)*16
		dash := ""
		if it[2] != "" {
			dash = ` stroke-dasharray="` + it[2] + `"`
		}
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"%s/>`, px(x), px(yy), px(x+24), px(yy), it[1], dash)
		fmt.Fprintf(b, `<text x="%s" y="%s" class="legend">%s</text>`, px(x+30), px(yy+4), html.EscapeString(it[0]))
	}
}

// cdfPoints thins sorted values to at most maxCDF points at evenly spaced ranks
// and returns them with their empirical CDF value (i+1)/n.
func cdfPoints(sorted []float64) (xs, ys []float64) {
	n := len(sorted)
	k := min(n, maxCDF)
	for j := range k {
		i := j
		if n > maxCDF {
			i = int(math.Round(float64(j) * float64(n-1) / float64(maxCDF-1)))
		}
		xs = append(xs, sorted[i])
		ys = append(ys, float64(i+1)/float64(n))
	}
	return xs, ys
}

// cdfSVG draws the real and sim empirical CDFs on one axis, p50 and p99 marked.
func cdfSVG(id, metric string, p *pairs) string {
	f := frame{w: 390, h: 320, left: 68, top: 14, right: 26, bott: 40}
	rs, ss := p.sorted()
	x := latencyAxis(f.x0(), f.x1(), rs, ss)
	y := axis{lo: 0, hi: 1, p0: f.y0(), p1: f.y1()}
	scale := "linear"
	if x.log {
		scale = "logarithmic"
	}
	var b strings.Builder
	svgOpen(&b, f, id, metric+": CDF of real and simulated values",
		fmt.Sprintf("Empirical CDF of %d real (blue, solid) and simulated (vermillion, dashed) %s values on a %s x axis; dotted lines mark p50 and p99, with markers where each curve crosses them.",
			p.len(), metric, scale))
	axes(&b, f, x, y, metric+" latency", "fraction of requests")
	for _, q := range []struct {
		v     float64
		label string
	}{{0.5, "p50"}, {0.99, "p99"}} {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="mark"/>`, px(f.x0()), px(y.at(q.v)), px(f.x1()), px(y.at(q.v)))
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, px(f.x1()-3), px(y.at(q.v)-3), q.label)
	}
	fmt.Fprintf(&b, `<g clip-path="url(#%s-clip)">`, id)
	for _, side := range []struct {
		vals []float64
		col  string
		dash string
	}{{rs, colReal, ""}, {ss, colSim, dashSim}} {
		xs, ys := cdfPoints(side.vals)
		var pts strings.Builder
		prevY := 0.0
		for i := range xs {
			xp := px(x.at(xs[i]))
			fmt.Fprintf(&pts, "%s,%s %s,%s ", xp, px(y.at(prevY)), xp, px(y.at(ys[i])))
			prevY = ys[i]
		}
		dash := ""
		if side.dash != "" {
			dash = ` stroke-dasharray="` + side.dash + `"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`, side.col, dash, strings.TrimSpace(pts.String()))
		for _, q := range []float64{50, 99} {
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3.5" fill="%s" stroke="#fff"/>`, px(x.at(quantile.Sorted(side.vals, q))), px(y.at(q/100)), side.col)
		}
	}
	b.WriteString(`</g>`)
	legend(&b, f.x0()+10, f.y1()+14, [][3]string{{"real", colReal, ""}, {"sim", colSim, dashSim}})
	b.WriteString(`</svg>`)
	return b.String()
}

// scatterSVG draws sim (y) against real (x) on equal axes with y = x and ±10 %.
func scatterSVG(id, metric string, p *pairs) string {
	f := frame{w: 350, h: 320, left: 68, top: 14, right: 26, bott: 40}
	// Equal axes: one domain for both, a square plotting area.
	side := math.Min(f.x1()-f.x0(), f.y0()-f.y1())
	f.right = f.w - f.left - side
	f.top = f.h - f.bott - side
	x := latencyAxis(f.x0(), f.x1(), p.real, p.sim)
	y := x
	y.p0, y.p1 = f.y0(), f.y1()
	scale := "linear axes"
	if x.log {
		scale = "log-log axes"
	}
	order := make([]int, p.len())
	for i := range order {
		order[i] = i
	}
	if !slices.IsSorted(p.ids) {
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(p.ids[a], p.ids[b]) }) // ids are unique
	}
	step := (len(order) + maxScat - 1) / maxScat
	shown := (len(order) + step - 1) / step
	var b strings.Builder
	svgOpen(&b, f, id, metric+": simulated against real, per request",
		fmt.Sprintf("Scatter of %d of %d requests (every %d in request_id order): real %s on x, simulated on y, equal %s; the solid line is y = x and the shaded band is within 10 percent.",
			shown, p.len(), step, metric, scale))
	axes(&b, f, x, y, "real "+metric, "sim "+metric)
	fmt.Fprintf(&b, `<g clip-path="url(#%s-clip)">`, id)
	lo, hi := x.lo, x.hi
	if x.log {
		lo = x.lo / 2
	}
	fmt.Fprintf(&b, `<polygon class="band" points="%s,%s %s,%s %s,%s %s,%s"/>`,
		px(x.at(lo)), px(y.at(lo*0.9)), px(x.at(hi)), px(y.at(hi*0.9)), px(x.at(hi)), px(y.at(hi*1.1)), px(x.at(lo)), px(y.at(lo*1.1)))
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="diag"/>`, px(x.at(lo)), px(y.at(lo)), px(x.at(hi)), px(y.at(hi)))
	b.WriteString(`<g fill="` + colReal + `" fill-opacity="0.55">`)
	for k := 0; k < len(order); k += step {
		i := order[k]
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.2"/>`, px(x.at(p.real[i])), px(y.at(p.sim[i])))
	}
	b.WriteString(`</g></g></svg>`)
	return b.String()
}

// histBin gives the bin of a signed percentage error: 0 is the underflow bin
// (< -100), 1..40 the 5-point bins from -100, 41 the overflow bin (>= +100).
func histBin(e float64) int {
	switch {
	case e < -100:
		return 0
	case e >= 100:
		return histBins + 1
	}
	return 1 + min(int(math.Floor((e+100)/5)), histBins-1)
}

// histogramSVG draws the signed percentage error 100·(s − r)/r per request.
func histogramSVG(id, metric string, p *pairs) string {
	f := frame{w: 380, h: 320, left: 44, top: 14, right: 14, bott: 50}
	counts := make([]int, histBins+2)
	sum, n := 0.0, 0
	for i := range p.real {
		if !qualifies(p.real[i], p.sim[i]) {
			continue
		}
		e := 100 * (p.sim[i] - p.real[i]) / p.real[i]
		counts[histBin(e)]++
		sum += e
		n++
	}
	top := 1
	for _, c := range counts {
		top = max(top, c)
	}
	y := axis{lo: 0, hi: float64(top), p0: f.y0(), p1: f.y1()}
	y.hi = math.Ceil(float64(top)/niceStep(float64(top)/5)) * niceStep(float64(top)/5)
	// x: bins laid out as 42 equal slots; value v maps to slot 1 + (v+100)/5.
	slot := (f.x1() - f.x0()) / float64(histBins+2)
	xAt := func(v float64) float64 {
		v = math.Max(-105, math.Min(105, v))
		return f.x0() + slot*(1+(v+100)/5)
	}
	mean := 0.0
	if n > 0 {
		mean = sum / float64(n)
	}
	var b strings.Builder
	svgOpen(&b, f, id, metric+": per-request error histogram",
		fmt.Sprintf("Histogram of the signed error 100*(sim - real)/real of %d %s pairs in 5-point bins from -100%% to +100%%, with overflow bins at each end; the solid line marks 0 and the dashed line the mean error, %.1f%%.",
			n, metric, mean))
	for _, t := range y.ticks() {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid"/>`, px(f.x0()), px(y.at(t)), px(f.x1()), px(y.at(t)))
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, px(f.x0()-4), px(y.at(t)+3.5), fmtNum(t))
	}
	for bin, c := range counts {
		if c == 0 {
			continue
		}
		x0 := f.x0() + slot*float64(bin)
		cls := "bar"
		if bin == 0 || bin == histBins+1 {
			cls = "bar over"
		}
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="%s"><title>%s: %d</title></rect>`,
			px(x0+0.5), px(y.at(float64(c))), px(slot-1), px(y.at(0)-y.at(float64(c))), cls, binLabel(bin), c)
	}
	for _, t := range []float64{-100, -50, 0, 50, 100} {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="frame"/>`, px(xAt(t)), px(f.y0()), px(xAt(t)), px(f.y0()+3))
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s%%</text>`, px(xAt(t)), px(f.y0()+14), fmtNum(t))
	}
	// The overflow bins get their labels on a second row, clear of the ±100 ticks.
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="start">&lt;-100%%</text>`, px(f.x0()), px(f.y0()+26))
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">&gt;=100%%</text>`, px(f.x1()), px(f.y0()+26))
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="frame"/>`, px(f.x0()), px(f.y1()), px(f.x1()-f.x0()), px(f.y0()-f.y1()))
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="zero"/>`, px(xAt(0)), px(f.y1()), px(xAt(0)), px(f.y0()))
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`,
		px(xAt(mean)), px(f.y1()), px(xAt(mean)), px(f.y0()), colSim, dashSim)
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="legend">mean %.1f%%</text>`, px(f.x0()+6), px(f.y1()+14), mean)
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s error, sim vs real (%%)</text>`, px((f.x0()+f.x1())/2), px(f.h-6), html.EscapeString(metric))
	fmt.Fprintf(&b, `<text x="12" y="%s" class="axis" text-anchor="middle" transform="rotate(-90 12 %s)">requests</text>`,
		px((f.y0()+f.y1())/2), px((f.y0()+f.y1())/2))
	b.WriteString(`</svg>`)
	return b.String()
}

func binLabel(bin int) string {
	switch bin {
	case 0:
		return "below -100%"
	case histBins + 1:
		return "+100% and above"
	}
	lo := -100 + 5*(bin-1)
	return fmt.Sprintf("%d%% to %d%%", lo, lo+5)
}
