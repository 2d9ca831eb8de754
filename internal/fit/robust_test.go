package fit

import (
	"math"
	"testing"

	"servesim/internal/nnls"
)

// TestRobustSolve: one equation off by a stall (10×) barely moves the
// robust solution, where least squares would follow it.
func TestRobustSolve(t *testing.T) {
	var eqs []equation
	for i := 1; i <= 20; i++ {
		y := 2 * float64(i)
		if i == 20 {
			y *= 10 // a stall
		}
		sigma := 0.02 * 2 * float64(i)
		eqs = append(eqs, equation{x: []float64{float64(i)}, y: y, w: 1 / (sigma * sigma), sigma: sigma})
	}
	got, err := robustSolve(eqs, 1, []float64{1}, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got[0]-2) > 0.02 {
		t.Errorf("robust slope %.4f, want 2 ± 0.02", got[0])
	}
	ne, err := nnls.New(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eqs {
		ne.Add(e.x, e.y, e.w)
	}
	ls, err := ne.Solve(nnls.Options{Prior: []float64{1}, Ridge: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if ls[0] < 2.2 {
		t.Errorf("least squares slope %.4f: the stall should pull it past 2.2 (else the test shows nothing)", ls[0])
	}
}
