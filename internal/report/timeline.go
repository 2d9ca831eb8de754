package report

import (
	"fmt"
	"slices"

	"servesim/internal/quantile"
	"servesim/internal/render"
)

// timelineBins is how many stretches of the run the median lines of the
// latency-over-time plots have: enough to show a trend, few enough that
// each median rests on many requests.
const timelineBins = 40

// timelineSVG draws one metric's real and simulated value of every
// request (thinned to maxScat) against its arrival time, with the median
// of each of timelineBins stretches of the run as a line: a queue that
// grows shows as a rising line, which the run-validity check flags as
// saturated.
func timelineSVG(id, metric string, arrivals []int64, p *pairs) string {
	n := min(len(arrivals), p.len())
	step := (n + maxScat - 1) / maxScat
	realDots := render.Series{Name: "real, a request", Color: colReal, Dots: true, Faint: true}
	simDots := render.Series{Name: "sim, a request", Color: colSim, Dots: true, Faint: true}
	last := int64(0)
	for i := range n {
		last = max(last, arrivals[i])
	}
	width := float64(last)/timelineBins + 1
	binsR, binsS := make([][]float64, timelineBins), make([][]float64, timelineBins)
	for i := range n {
		a := float64(arrivals[i])
		if i%step == 0 {
			realDots.X, realDots.Y = append(realDots.X, a), append(realDots.Y, p.real[i])
			simDots.X, simDots.Y = append(simDots.X, a), append(simDots.Y, p.sim[i])
		}
		k := min(int(a/width), timelineBins-1)
		if k >= 0 {
			binsR[k], binsS[k] = append(binsR[k], p.real[i]), append(binsS[k], p.sim[i])
		}
	}
	realLine := render.Series{Name: "real, median", Color: colReal}
	simLine := render.Series{Name: "sim, median", Color: colSim, Dash: dashSim}
	for k := range timelineBins {
		if len(binsR[k]) == 0 {
			continue
		}
		mid := (float64(k) + 0.5) * width
		slices.Sort(binsR[k])
		slices.Sort(binsS[k])
		realLine.X, realLine.Y = append(realLine.X, mid), append(realLine.Y, quantile.Sorted(binsR[k], 50))
		simLine.X, simLine.Y = append(simLine.X, mid), append(simLine.Y, quantile.Sorted(binsS[k], 50))
	}
	plot := &render.Plot{
		ID: id, Title: metric + " over the run, real and simulated", XTitle: "arrival time", YTitle: metric + " latency",
		XLatency: true, YLatency: true, LabelPoints: -1,
		Series: []render.Series{realDots, simDots, realLine, simLine},
		Desc: fmt.Sprintf("%s of %d requests (every %d shown as a dot) against their arrival time, real in blue, simulated in vermillion; the lines are the medians of %d equal stretches of the run, real solid, simulated dashed.",
			metric, n, step, timelineBins),
	}
	return plot.SVG()
}
