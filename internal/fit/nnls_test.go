package fit

import (
	"math"
	"testing"
)

// TestNNLS checks the solver on problems solved by hand.
func TestNNLS(t *testing.T) {
	type eq struct {
		x    []float64
		y, w float64
	}
	tests := []struct {
		name  string
		eqs   []eq
		prior []float64
		want  []float64
	}{
		{
			// y = 2 + 3x exactly: the unconstrained solution is feasible.
			name:  "interior",
			eqs:   []eq{{[]float64{1, 0}, 2, 1}, {[]float64{1, 1}, 5, 1}, {[]float64{1, 2}, 8, 1}},
			prior: []float64{0, 0},
			want:  []float64{2, 3},
		},
		{
			// y = 4 − x: least squares wants a negative slope; with θ ≥ 0
			// the slope is 0 and the intercept the mean of y, 3.
			name:  "clamped",
			eqs:   []eq{{[]float64{1, 0}, 4, 1}, {[]float64{1, 1}, 3, 1}, {[]float64{1, 2}, 2, 1}},
			prior: []float64{0, 0},
			want:  []float64{3, 0},
		},
		{
			// The second parameter never appears: it keeps its prior.
			name:  "unseen column",
			eqs:   []eq{{[]float64{2, 0}, 4, 1}, {[]float64{1, 0}, 2, 1}},
			prior: []float64{7, 5},
			want:  []float64{2, 5},
		},
		{
			// Weights: (1, 1) and (3, 1) in one unknown; weights 3 and 1
			// give θ = (3·1 + 1·3)/(3 + 1) = 1.5.
			name:  "weighted",
			eqs:   []eq{{[]float64{1}, 1, 3}, {[]float64{1}, 3, 1}},
			prior: []float64{0},
			want:  []float64{1.5},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := newNormal(len(tc.prior))
			for _, e := range tc.eqs {
				n.add(e.x, e.y, e.w)
			}
			got, err := n.solveNNLS(tc.prior, 1e-12)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-6 {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestRMSRelative: equations y = 2x at θ = 2.2 are 10% off each.
func TestRMSRelative(t *testing.T) {
	n := newNormal(1)
	for _, x := range []float64{1, 2, 5} {
		y := 2 * x
		n.add([]float64{x}, y, 1/(y*y))
	}
	n.symmetric()
	if got := n.rmsRelative([]float64{2.2}); math.Abs(got-0.1) > 1e-12 {
		t.Errorf("got %v, want 0.1", got)
	}
}

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
	ne := newNormal(1)
	for _, e := range eqs {
		ne.add(e.x, e.y, e.w)
	}
	ls, err := ne.solveNNLS([]float64{1}, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	if ls[0] < 2.2 {
		t.Errorf("least squares slope %.4f: the stall should pull it past 2.2 (else the test shows nothing)", ls[0])
	}
}
