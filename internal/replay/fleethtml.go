package replay

import (
	"fmt"
	"io"
	"strings"

	"servesim/internal/des/metrics"
	"servesim/internal/exitcode"
	"servesim/internal/outfile"
	"servesim/internal/render"
)

// FleetHTML is the page of a fleet over time (--fleet-html): the traffic,
// the replicas and the p99 TTFT per bucket, and the totals.
func FleetHTML(s *metrics.Summary) string {
	f := s.Fleet
	var b strings.Builder
	render.PageHead(&b, "The fleet over time")
	perM := "-"
	if f.DollarsPerMillionTokens != nil {
		perM = fmt.Sprintf("$%.4f", *f.DollarsPerMillionTokens)
	}
	fmt.Fprintf(&b, "<p class=\"headline\">%.2f GPU-hours, $%.2f, %s per million tokens; SLO attainment %s; peak %d replicas, %d scale-ups, %d scale-downs</p>\n",
		f.GPUHours, f.Dollars, perM, pct(s.SLOAttainment), f.PeakReplicas, f.ScaleUps, f.ScaleDowns)
	if s.Deployment != "" {
		fmt.Fprintf(&b, "<p class=\"muted\">%s</p>\n", render.Esc(s.Deployment))
	}
	var x, arr, done, ready, loading, gpus, px, p99 []float64
	for _, o := range f.OverTime {
		x = append(x, o.StartS/60)
		arr, done = append(arr, float64(o.Arrivals)), append(done, float64(o.Completed))
		ready, loading, gpus = append(ready, o.Replicas), append(loading, o.Loading), append(gpus, o.GPUs)
		if o.Completed > 0 {
			px, p99 = append(px, o.StartS/60), append(p99, o.TTFTP99Ms*1e3)
		}
	}
	per := fmt.Sprintf("per %s", render.Span(f.BucketS*1e6))
	plots := []*render.Plot{
		{ID: "traffic", Title: "Traffic", XTitle: "minute", YTitle: "requests " + per, LabelPoints: -1, Series: []render.Series{
			{Name: "arrived", Color: render.Palette[0], X: x, Y: arr}, {Name: "completed", Color: render.Palette[1], Dash: "4 3", X: x, Y: done}}},
		{ID: "replicas", Title: "Replicas", XTitle: "minute", YTitle: "replicas (time average)", LabelPoints: -1, Series: []render.Series{
			{Name: "ready", Color: render.Palette[0], X: x, Y: ready}, {Name: "loading", Color: render.Palette[4], X: x, Y: loading},
			{Name: "GPUs", Color: render.Palette[6], Dash: "2 3", X: x, Y: gpus}}},
		{ID: "ttft", Title: "p99 TTFT", XTitle: "minute", YTitle: "p99 TTFT " + per, YLatency: true, LabelPoints: -1, Series: []render.Series{
			{Name: "p99 TTFT of the requests arrived", Color: render.Palette[1], X: px, Y: p99}}},
	}
	for _, p := range plots {
		b.WriteString(p.SVG())
		b.WriteString("\n")
	}
	var rows [][]string
	for _, o := range f.OverTime {
		rows = append(rows, []string{fmt.Sprintf("%.0f", o.StartS), fmt.Sprintf("%.2f", o.Replicas), fmt.Sprintf("%.2f", o.Loading),
			fmt.Sprintf("%.2f", o.GPUs), fmt.Sprintf("%.4f", o.Dollars), fmt.Sprint(o.Arrivals), fmt.Sprint(o.Completed),
			pct(o.SLOAttainment), fmt.Sprintf("%.2f", o.TTFTP99Ms)})
	}
	render.Table(&b, []string{"start s", "replicas", "loading", "GPUs", "$", "arrivals", "completed", "SLO", "TTFT p99 ms"}, rows,
		[]bool{true, true, true, true, true, true, true, true, true}, false)
	b.WriteString("</body>\n</html>\n")
	return b.String()
}

// writeFleetHTML is --fleet-html: the page, visible only once whole.
func writeFleetHTML(path string, s *metrics.Summary) error {
	if path == "" {
		return nil
	}
	if s.Fleet == nil {
		return exitcode.Usagef("--fleet-html draws a fleet: give --fleet-file")
	}
	f, err := outfile.Open(path, nil)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, FleetHTML(s)); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
