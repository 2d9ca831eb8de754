package fit

import (
	"math"
	"testing"
)

// TestRobustSolve: one equation off by a stall (10×) barely moves the
// robust solution, where least squares would follow it.
func TestRobustSolve(t *testing.T) {
	var eqs []Equation
	for i := 1; i <= 20; i++ {
		y := 2 * float64(i)
		if i == 20 {
			y *= 10 // a stall
		}
		sigma := 0.02 * 2 * float64(i)
		eqs = append(eqs, Equation{X: []float64{float64(i)}, Y: y, W: 1 / (sigma * sigma), Sigma: sigma})
	}
	got, err := robustSolve(eqs, 1, []float64{1}, 1e-9, robustPasses)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got[0]-2) > 0.02 {
		t.Errorf("robust slope %.4f, want 2 ± 0.02", got[0])
	}
	ls, err := robustSolve(eqs, 1, []float64{1}, 1e-9, 0) // plain least squares
	if err != nil {
		t.Fatal(err)
	}
	if ls[0] < 2.2 {
		t.Errorf("least squares slope %.4f: the stall should pull it past 2.2 (else the test shows nothing)", ls[0])
	}
}
