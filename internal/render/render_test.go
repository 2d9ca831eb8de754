package render

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestTickDur(t *testing.T) {
	for _, c := range []struct {
		us   float64
		want string
	}{
		{0, "0"}, {250, "250 us"}, {250e3, "250 ms"}, {1.2e6, "1.2 s"}, {50e3, "50 ms"}, {1e6, "1 s"},
		{999.5, "1000 us"}, {150e6, "150 s"}, {200e6, "200 s"}, {-2e3, "-2 ms"},
	} {
		if got := TickDur(c.us); got != c.want {
			t.Errorf("TickDur(%g) = %q, want %q", c.us, got, c.want)
		}
	}
}

func TestSpan(t *testing.T) {
	for _, c := range []struct {
		us   float64
		want string
	}{
		{0, "0"}, {3.5e6, "3.50 s"}, {183.567455e6, "3 min 4 s"}, {7500e6, "2 h 5 min"},
	} {
		if got := Span(c.us); got != c.want {
			t.Errorf("Span(%g) = %q, want %q", c.us, got, c.want)
		}
	}
}

func TestRobustHigh(t *testing.T) {
	for _, c := range []struct {
		vals    []float64
		hi      float64
		clipped bool
	}{
		{[]float64{792, 392, 361, 255, 238, 237, 11900}, 792, true}, // one outlier
		{[]float64{50, 60, 70, 80}, 80, false},                      // none
		{[]float64{1, 2, 100}, 100, false},                          // too few to judge
		{[]float64{10, 11, 12, 13, 19}, 19, false},                  // within the fence
	} {
		hi, clipped := RobustHigh(c.vals)
		if hi != c.hi || clipped != c.clipped {
			t.Errorf("RobustHigh(%v) = %g, %v; want %g, %v", c.vals, hi, clipped, c.hi, c.clipped)
		}
	}
}

func TestLabellerNeverOverlaps(t *testing.T) {
	f := Frame{W: 200, H: 100, Left: 10, Top: 10, Right: 10, Bottom: 10}
	l := NewLabeller(f)
	l.Occupy(100, 50, 4)
	var placed []box
	for range 20 {
		p, ok := l.Put("SLO ttft.p99<1s", Around(100, 50))
		if !ok {
			continue
		}
		placed = append(placed, l.used[len(l.used)-1])
		if p.X < f.X0() || p.X > f.X1() {
			t.Errorf("label at x %g outside the plotting area", p.X)
		}
	}
	if len(placed) == 0 || len(placed) > 4 {
		t.Fatalf("placed %d labels around one point, want 1 to 4", len(placed))
	}
	for i := range placed {
		if placed[i].overlaps(box{96, 46, 104, 54}) {
			t.Errorf("label %d covers the point", i)
		}
		for j := range i {
			if placed[i].overlaps(placed[j]) {
				t.Errorf("labels %d and %d overlap", i, j)
			}
		}
	}
}

// TestPlotReadable checks what a reader relies on: an outlier does not
// stretch the y axis (it sits on the top edge as ▲ with its value), few
// points carry their values, the legend lies below the plotting area, zero
// is labelled "0", and a bound far above the data is named at the top.
func TestPlotReadable(t *testing.T) {
	p := &Plot{ID: "t", XTitle: "cost", YTitle: "ttft", YLatency: true,
		Series: []Series{{Name: "front", Color: Blue, X: []float64{1, 2, 3, 4, 5, 6, 7}, Y: []float64{792e3, 392e3, 361e3, 255e3, 238e3, 237e3, 11.9e6}}},
		HMarks: []Mark{{At: 1e6, Label: "SLO ttft.p99<1s", Color: SLORed}, {At: 60e6, Label: "SLO e2e.p99<60s", Color: SLORed}}}
	svg := p.SVG()
	for _, want := range []string{">0</text>", "▲ 11.9 s", ">792 ms</text>", ">SLO ttft.p99<1s</text>", "↑ SLO e2e.p99<60s (far above)"} {
		if !strings.Contains(svg, strings.ReplaceAll(want, "<1s<", "&lt;1s<")) && !strings.Contains(svg, strings.ReplaceAll(want, "<", "&lt;")) {
			t.Errorf("svg lacks %q", want)
		}
	}
	if strings.Contains(svg, "0 us") {
		t.Error(`zero is labelled "0 us"`)
	}
	// The y axis tops out below the outlier: its highest tick is under 2 s.
	ticks := regexp.MustCompile(`text-anchor="end">([0-9.]+) s</text>`).FindAllStringSubmatch(svg, -1)
	for _, m := range ticks {
		if v, _ := strconv.ParseFloat(m[1], 64); v > 2 {
			t.Errorf("y tick %s s: the outlier stretched the axis", m[1])
		}
	}
	// The legend's entry is drawn below the plotting area's bottom.
	f := Frame{W: 430, Left: 68, Top: 14, Right: 18}
	f.Bottom = 42 + LegendHeight(p.keys(), f.W-f.Left-f.Right)
	f.H = 254 + f.Bottom
	m := regexp.MustCompile(`<text x="[0-9.]+" y="([0-9.]+)" class="legend">front</text>`).FindStringSubmatch(svg)
	if m == nil {
		t.Fatal("no legend entry for the series")
	}
	if y, _ := strconv.ParseFloat(m[1], 64); y <= f.Y0() {
		t.Errorf("legend at y %g, inside the plotting area (bottom %g)", y, f.Y0())
	}
}
