package noise

import (
	"math"
	"testing"
)

// TestTQuantileTable: the two-sided 95% critical values of Student's t
// printed in every statistics table, and the normal's 1.959964 in the limit.
func TestTQuantileTable(t *testing.T) {
	for _, c := range []struct{ df, want float64 }{
		{1, 12.7062}, {2, 4.3027}, {3, 3.1824}, {4, 2.7764}, {5, 2.5706}, {9, 2.2622},
		{10, 2.2281}, {19, 2.0930}, {29, 2.0452}, {100, 1.9840}, {1e6, 1.9600},
	} {
		if got := TQuantile(0.975, c.df); math.Abs(got-c.want) > 5e-5*c.want {
			t.Errorf("TQuantile(0.975, %g) = %.5f, want %.4f", c.df, got, c.want)
		}
	}
	// Other levels, and the symmetry about 0.
	if got := TQuantile(0.95, 4); math.Abs(got-2.1318) > 1e-4 {
		t.Errorf("TQuantile(0.95, 4) = %.5f, want 2.1318", got)
	}
	if got := TQuantile(0.025, 9); math.Abs(got+2.2622) > 1e-4 {
		t.Errorf("TQuantile(0.025, 9) = %.5f, want -2.2622", got)
	}
	for _, bad := range [][2]float64{{0, 3}, {1, 3}, {0.5, 0}, {math.NaN(), 3}, {0.9, math.Inf(1)}} {
		if got := TQuantile(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("TQuantile(%g, %g) = %g, want NaN", bad[0], bad[1], got)
		}
	}
}

// TestTCDFKnownValues: with one degree of freedom t is Cauchy, whose CDF
// is ½ + atan(t)/π; with two, ½ + t/(2√(2+t²)).
func TestTCDFKnownValues(t *testing.T) {
	for _, x := range []float64{-30, -2, -0.5, 0, 0.3, 1, 4, 50} {
		if got, want := TCDF(x, 1), 0.5+math.Atan(x)/math.Pi; math.Abs(got-want) > 1e-12 {
			t.Errorf("TCDF(%g, 1) = %.15f, want %.15f", x, got, want)
		}
		if got, want := TCDF(x, 2), 0.5+x/(2*math.Sqrt(2+x*x)); math.Abs(got-want) > 1e-12 {
			t.Errorf("TCDF(%g, 2) = %.15f, want %.15f", x, got, want)
		}
	}
}

// TestOf: three repeats 10, 12, 14: mean 12, SD 2, half-width
// 4.3027·2/√3 = 4.968, CV 1/6; not enough (41% > 5%). Ten repeats
// 100 ± 1 alternating: half-width 2.2622·1.054/√10 = 0.754 (0.75% of the
// mean): enough.
func TestOf(t *testing.T) {
	e := Of([]float64{10, 12, 14})
	half := 4.302653 * 2 / math.Sqrt(3)
	if e.N != 3 || e.Mean != 12 || math.Abs(e.SD-2) > 1e-12 || math.Abs(e.HalfWidth()-half) > 1e-5 ||
		math.Abs(e.CILo-(12-half)) > 1e-5 || math.Abs(e.CIHi-(12+half)) > 1e-5 {
		t.Errorf("Of(10,12,14) = %+v, want mean 12, SD 2, CI 12 ± %.4f", e, half)
	}
	if e.CV == nil || math.Abs(*e.CV-1.0/6) > 1e-12 || e.CIHalfWidthPct == nil || math.Abs(*e.CIHalfWidthPct-100*half/12) > 1e-4 || e.Enough {
		t.Errorf("Of(10,12,14): CV %v, half-width %v%%, enough %v; want 1/6, %.2f%%, false", e.CV, e.CIHalfWidthPct, e.Enough, 100*half/12)
	}
	var xs []float64
	for i := range 10 {
		xs = append(xs, 100+float64(2*(i%2)-1))
	}
	e = Of(xs)
	sd := math.Sqrt(10.0 / 9)
	if math.Abs(e.Mean-100) > 1e-12 || math.Abs(e.SD-sd) > 1e-12 || math.Abs(e.HalfWidth()-2.262157*sd/math.Sqrt(10)) > 1e-5 || !e.Enough {
		t.Errorf("Of(99,101,...) = %+v, want mean 100, SD %.4f, half-width %.4f, enough", e, sd, 2.262157*sd/math.Sqrt(10))
	}
}

// TestOfEdges: no repeat, one repeat (no interval, never enough), all
// zero (no spread: enough), a zero mean with spread (relative figures
// unbounded: absent).
func TestOfEdges(t *testing.T) {
	if e := Of(nil); e.N != 0 || e.Enough {
		t.Errorf("Of(nil) = %+v", e)
	}
	if e := Of([]float64{7}); e.N != 1 || e.Mean != 7 || e.CILo != 7 || e.CIHi != 7 || e.CV != nil || e.Enough {
		t.Errorf("Of(7) = %+v, want mean 7, no interval, not enough", e)
	}
	if e := Of([]float64{0, 0, 0}); e.CV == nil || *e.CV != 0 || !e.Enough {
		t.Errorf("Of(0,0,0) = %+v, want CV 0, enough", e)
	}
	if e := Of([]float64{-1, 1}); e.CV != nil || e.CIHalfWidthPct != nil || e.Enough {
		t.Errorf("Of(-1,1) = %+v, want relative figures absent, not enough", e)
	}
	if got := Of([]float64{10, 12, 14}).Text("%.1f"); got != "12.0 ± 5.0 (95% CI 7.0–17.0, CV 16.7%)" {
		t.Errorf("Text = %q", got)
	}
}

// TestNeeded: 10, 12, 14 (SD 2, mean 12) needs t(n−1)·2/√n ≤ 0.6: n = 46
// (2.0141·2/√46 = 0.594 passes, 2.0154·2/√45 = 0.601 does not). Already
// enough: itself or fewer; one repeat or a zero mean: 0.
func TestNeeded(t *testing.T) {
	if got := Of([]float64{10, 12, 14}).Needed(); got != 46 {
		t.Errorf("Needed(10,12,14) = %d, want 46", got)
	}
	if got := Of([]float64{100, 100.1, 99.9}).Needed(); got > 3 || got < 2 {
		t.Errorf("Needed(100±0.1) = %d, want at most 3", got)
	}
	if got := Of([]float64{5}).Needed(); got != 0 {
		t.Errorf("Needed(one repeat) = %d, want 0", got)
	}
	if got := Of([]float64{-1, 1}).Needed(); got != 0 {
		t.Errorf("Needed(zero mean) = %d, want 0", got)
	}
}
