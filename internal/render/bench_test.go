package render

import (
	"fmt"
	"testing"
)

// BenchmarkPlot draws the sweep page's usual chart: six series of three
// rates with an SLO bound and a legend.
func BenchmarkPlot(b *testing.B) {
	p := &Plot{ID: "b", Title: "TTFT against the offered rate", XTitle: "offered rate (req/s)", YTitle: "TTFT p99", YLatency: true,
		HMarks: []Mark{{At: 500e3, Label: "SLO ttft.p99<500ms", Color: SLORed}}}
	for i := range 6 {
		p.Series = append(p.Series, Series{Name: fmt.Sprintf("num_instances=%d max_num_seqs=64 p99", i), Color: Palette[i],
			X: []float64{20, 40, 60}, Y: []float64{float64(50+i) * 1e3, float64(60+3*i) * 1e3, float64(70+4*i) * 1e3}})
	}
	n := 0
	for b.Loop() {
		n = len(p.SVG())
	}
	b.ReportMetric(float64(n), "svg-bytes")
}
