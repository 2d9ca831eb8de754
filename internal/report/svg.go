package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"servesim/internal/render"
)

// Inline SVG plots for the HTML report (docs/calibrate.md §11). Real and sim use the
// Okabe–Ito blue and vermillion, distinct for colour-blind readers, and also
// differ in dash pattern (real solid, sim dashed).
const (
	colReal  = render.Blue
	colSim   = render.Vermillion
	dashSim  = render.DashSim
	maxScat  = 5000
	histBins = 40 // 5-point bins from -100 to +100
)

// cdfSVG draws the real and sim empirical CDFs on one axis, p50 and p99 marked.
func cdfSVG(id, metric string, p *pairs) string {
	rs, ss := p.sorted()
	c := render.CDF{ID: id, Title: metric + ": CDF of real and simulated values", XTitle: metric + " latency",
		Names: [2]string{"real", "sim"}, Sorted: [2][]float64{rs, ss}}
	scale := "linear"
	if c.LogScale() {
		scale = "logarithmic"
	}
	c.Desc = fmt.Sprintf("Empirical CDF of %d real (blue, solid) and simulated (vermillion, dashed) %s values on a %s x axis; dotted lines mark p50 and p99, with markers where each curve crosses them.",
		p.len(), metric, scale)
	return c.SVG()
}

// scatterSVG draws sim (y) against real (x) on equal axes with y = x and ±10 %.
func scatterSVG(id, metric string, p *pairs) string {
	f := render.Frame{W: 350, H: 320, Left: 68, Top: 14, Right: 26, Bottom: 40}
	// Equal axes: one domain for both, a square plotting area.
	side := math.Min(f.X1()-f.X0(), f.Y0()-f.Y1())
	f.Right = f.W - f.Left - side
	f.Top = f.H - f.Bottom - side
	x := render.LatencyAxis(f.X0(), f.X1(), p.real, p.sim)
	y := x
	y.P0, y.P1 = f.Y0(), f.Y1()
	scale := "linear axes"
	if x.Log {
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
	render.Open(&b, f, id, metric+": simulated against real, per request",
		fmt.Sprintf("Scatter of %d of %d requests (every %d in request_id order): real %s on x, simulated on y, equal %s; the solid line is y = x and the shaded band is within 10 percent.",
			shown, p.len(), step, metric, scale))
	render.Axes(&b, f, x, y, "real "+metric, "sim "+metric)
	fmt.Fprintf(&b, `<g clip-path="url(#%s-clip)">`, id)
	lo, hi := x.Lo, x.Hi
	if x.Log {
		lo = x.Lo / 2
	}
	fmt.Fprintf(&b, `<polygon class="band" points="%s,%s %s,%s %s,%s %s,%s"/>`,
		render.Px(x.At(lo)), render.Px(y.At(lo*0.9)), render.Px(x.At(hi)), render.Px(y.At(hi*0.9)), render.Px(x.At(hi)), render.Px(y.At(hi*1.1)), render.Px(x.At(lo)), render.Px(y.At(lo*1.1)))
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="diag"/>`, render.Px(x.At(lo)), render.Px(y.At(lo)), render.Px(x.At(hi)), render.Px(y.At(hi)))
	b.WriteString(`<g fill="` + colReal + `" fill-opacity="0.55">`)
	for k := 0; k < len(order); k += step {
		i := order[k]
		fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.2"/>`, render.Px(x.At(p.real[i])), render.Px(y.At(p.sim[i])))
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
	f := render.Frame{W: 380, H: 320, Left: 44, Top: 14, Right: 14, Bottom: 50}
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
	y := render.Axis{Lo: 0, Hi: float64(top), P0: f.Y0(), P1: f.Y1()}
	y.Hi = math.Ceil(float64(top)/render.NiceStep(float64(top)/5)) * render.NiceStep(float64(top)/5)
	// x: bins laid out as 42 equal slots; value v maps to slot 1 + (v+100)/5.
	slot := (f.X1() - f.X0()) / float64(histBins+2)
	xAt := func(v float64) float64 {
		v = math.Max(-105, math.Min(105, v))
		return f.X0() + slot*(1+(v+100)/5)
	}
	mean := 0.0
	if n > 0 {
		mean = sum / float64(n)
	}
	var b strings.Builder
	render.Open(&b, f, id, metric+": per-request error histogram",
		fmt.Sprintf("Histogram of the signed error 100*(sim - real)/real of %d %s pairs in 5-point bins from -100%% to +100%%, with overflow bins at each end; the solid line marks 0 and the dashed line the mean error, %.1f%%.",
			n, metric, mean))
	for _, t := range y.Ticks() {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="grid"/>`, render.Px(f.X0()), render.Px(y.At(t)), render.Px(f.X1()), render.Px(y.At(t)))
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">%s</text>`, render.Px(f.X0()-4), render.Px(y.At(t)+3.5), render.Num(t))
	}
	for bin, c := range counts {
		if c == 0 {
			continue
		}
		x0 := f.X0() + slot*float64(bin)
		cls := "bar"
		if bin == 0 || bin == histBins+1 {
			cls = "bar over"
		}
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="%s"><title>%s: %d</title></rect>`,
			render.Px(x0+0.5), render.Px(y.At(float64(c))), render.Px(slot-1), render.Px(y.At(0)-y.At(float64(c))), cls, binLabel(bin), c)
	}
	for _, t := range []float64{-100, -50, 0, 50, 100} {
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="frame"/>`, render.Px(xAt(t)), render.Px(f.Y0()), render.Px(xAt(t)), render.Px(f.Y0()+3))
		fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="middle">%s%%</text>`, render.Px(xAt(t)), render.Px(f.Y0()+14), render.Num(t))
	}
	// The overflow bins get their labels on a second row, clear of the ±100 ticks.
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="start">&lt;-100%%</text>`, render.Px(f.X0()), render.Px(f.Y0()+26))
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="tick" text-anchor="end">&gt;=100%%</text>`, render.Px(f.X1()), render.Px(f.Y0()+26))
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" class="frame"/>`, render.Px(f.X0()), render.Px(f.Y1()), render.Px(f.X1()-f.X0()), render.Px(f.Y0()-f.Y1()))
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="zero"/>`, render.Px(xAt(0)), render.Px(f.Y1()), render.Px(xAt(0)), render.Px(f.Y0()))
	fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2" stroke-dasharray="%s"/>`,
		render.Px(xAt(mean)), render.Px(f.Y1()), render.Px(xAt(mean)), render.Px(f.Y0()), colSim, dashSim)
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="legend">mean %.1f%%</text>`, render.Px(f.X0()+6), render.Px(f.Y1()+14), mean)
	fmt.Fprintf(&b, `<text x="%s" y="%s" class="axis" text-anchor="middle">%s error, sim vs real (%%)</text>`, render.Px((f.X0()+f.X1())/2), render.Px(f.H-6), render.Esc(metric))
	fmt.Fprintf(&b, `<text x="12" y="%s" class="axis" text-anchor="middle" transform="rotate(-90 12 %s)">requests</text>`,
		render.Px((f.Y0()+f.Y1())/2), render.Px((f.Y0()+f.Y1())/2))
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
