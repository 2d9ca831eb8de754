package nnls

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

type eq struct {
	x    []float64
	y, w float64
}

func problem(t *testing.T, p int, eqs []eq) *Problem {
	t.Helper()
	n, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range eqs {
		n.Add(e.x, e.y, e.w)
	}
	return n
}

// TestSolve checks problems solved by hand.
func TestSolve(t *testing.T) {
	tests := []struct {
		name string
		p    int
		eqs  []eq
		opts Options
		want []float64
	}{
		{
			// y = 2 + 3x exactly: the unconstrained solution is feasible.
			name: "interior",
			p:    2,
			eqs:  []eq{{[]float64{1, 0}, 2, 1}, {[]float64{1, 1}, 5, 1}, {[]float64{1, 2}, 8, 1}},
			want: []float64{2, 3},
		},
		{
			// y = 4 − x: least squares wants slope −1; with θ ≥ 0 the slope
			// is held at 0 (there the loss still rises with the slope:
			// Σ x(θ₀ − y) = 0·(−1) + 1·0 + 2·1 = 2 > 0) and the intercept is
			// the mean of y, 3.
			name: "active constraint",
			p:    2,
			eqs:  []eq{{[]float64{1, 0}, 4, 1}, {[]float64{1, 1}, 3, 1}, {[]float64{1, 2}, 2, 1}},
			want: []float64{3, 0},
		},
		{
			// y = 10 − 2x₁ + x₂ on a grid: both the intercept and x₂ stay,
			// x₁ is clamped; with x₁ gone, the least squares of
			// y = θ₀ + θ₂x₂ over x₁ ∈ {0, 1}, x₂ ∈ {0, 1} is θ₀ = 9, θ₂ = 1.
			name: "active constraint, three unknowns",
			p:    3,
			eqs: []eq{{[]float64{1, 0, 0}, 10, 1}, {[]float64{1, 1, 0}, 8, 1},
				{[]float64{1, 0, 1}, 11, 1}, {[]float64{1, 1, 1}, 9, 1}},
			want: []float64{9, 0, 1},
		},
		{
			// The second unknown never appears: it keeps its prior.
			name: "untouched column",
			p:    2,
			eqs:  []eq{{[]float64{2, 0}, 4, 1}, {[]float64{1, 0}, 2, 1}},
			opts: Options{Prior: []float64{7, 5}},
			want: []float64{2, 5},
		},
		{
			// One unknown, y = 1 with weight 3 and y = 3 with weight 1:
			// θ = (3·1 + 1·3)/(3 + 1) = 1.5.
			name: "weighted",
			p:    1,
			eqs:  []eq{{[]float64{1}, 1, 3}, {[]float64{1}, 3, 1}},
			want: []float64{1.5},
		},
		{
			// y = 3 + 2x at x = 1, 2, 3 with the intercept held at 1: the
			// slope is Σx(y − 1)/Σx² = (4 + 12 + 24)/14 = 20/7.
			name: "fixed",
			p:    2,
			eqs:  []eq{{[]float64{1, 1}, 5, 1}, {[]float64{1, 2}, 7, 1}, {[]float64{1, 3}, 9, 1}},
			opts: Options{Prior: []float64{1, 0}, Fixed: []bool{true, false}},
			want: []float64{1, 20.0 / 7},
		},
		{
			// A held unknown may be negative: y = x₂ − 1 with θ₁ held at −1
			// leaves θ₂ = 1 exactly.
			name: "fixed negative",
			p:    2,
			eqs:  []eq{{[]float64{1, 1}, 0, 1}, {[]float64{1, 3}, 2, 1}},
			opts: Options{Prior: []float64{-1, 0}, Fixed: []bool{true, false}},
			want: []float64{-1, 1},
		},
		{
			// θ = 2 measured once (G₁₁ = 1); ridge 1 towards 0 minimises
			// (θ − 2)² + θ², so θ = 1.
			name: "ridge towards zero",
			p:    1,
			eqs:  []eq{{[]float64{1}, 2, 1}},
			opts: Options{Ridge: 1},
			want: []float64{1},
		},
		{
			// The same towards a prior of 4: (θ − 2)² + (θ − 4)², θ = 3. The
			// ridge is relative to the column's scale: with x = 2 and y = 4
			// (G₁₁ = 4) the pull is 4(θ − 4)² against 4(θ − 2)², θ = 3 again.
			name: "ridge towards a prior",
			p:    2,
			eqs:  []eq{{[]float64{1, 0}, 2, 1}, {[]float64{0, 2}, 4, 1}},
			opts: Options{Prior: []float64{4, 4}, Ridge: 1},
			want: []float64{3, 3},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := problem(t, tc.p, tc.eqs)
			got, err := n.Solve(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.want {
				if math.Abs(got[i]-tc.want[i]) > 1e-9*math.Max(1, tc.want[i]) {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
			if n.rows != len(tc.eqs) {
				t.Errorf("rows: got %d, want %d", n.rows, len(tc.eqs))
			}
		})
	}
}

// TestSolveKKT: on random problems, the solution meets the optimality
// conditions of non-negative least squares: θ ≥ 0, the gradient
// Aᵀ(Aθ − y) is zero on the unknowns above 0 and not negative on those at 0.
func TestSolveKKT(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		p := 1 + rng.IntN(6)
		m := p + rng.IntN(20)
		var eqs []eq
		for range m {
			x := make([]float64, p)
			for j := range x {
				x[j] = rng.NormFloat64() * math.Pow(10, float64(j%3))
			}
			eqs = append(eqs, eq{x, rng.NormFloat64() * 10, 0.5 + rng.Float64()})
		}
		got, err := problem(t, p, eqs).Solve(Options{})
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < p; j++ {
			var grad, norm float64
			for _, e := range eqs {
				r := -e.y
				for k := range got {
					r += e.x[k] * got[k]
				}
				grad += e.w * e.x[j] * r
				norm += e.w * math.Abs(e.x[j]) * (math.Abs(e.y) + 1)
			}
			g := grad / norm
			switch {
			case got[j] < 0:
				t.Fatalf("trial %d: θ%d = %v < 0", trial, j, got[j])
			case got[j] > 0 && math.Abs(g) > 1e-8:
				t.Fatalf("trial %d: θ%d = %v > 0 with relative gradient %v, want 0", trial, j, got[j], g)
			case got[j] == 0 && g < -1e-8:
				t.Fatalf("trial %d: θ%d = 0 with relative gradient %v < 0: the loss falls as it rises", trial, j, g)
			}
		}
	}
}

// TestSolveDegenerate: two identical columns share the fit without error.
func TestSolveDegenerate(t *testing.T) {
	n := problem(t, 2, []eq{{[]float64{1, 1}, 2, 1}, {[]float64{2, 2}, 4, 1}})
	got, err := n.Solve(Options{Ridge: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if got[0] < 0 || got[1] < 0 || math.Abs(got[0]+got[1]-2) > 1e-6 {
		t.Errorf("got %v, want θ₀ + θ₁ = 2, both ≥ 0", got)
	}
}

// TestErrors: bad sizes, values and options are errors, never panics.
func TestErrors(t *testing.T) {
	if _, err := New(0); err == nil || !strings.Contains(err.Error(), "0 unknowns") {
		t.Errorf("New(0): %v", err)
	}
	tests := []struct {
		name string
		eqs  []eq
		opts Options
		want string
	}{
		{"short row", []eq{{[]float64{1, 2}, 1, 1}, {[]float64{1}, 1, 1}}, Options{}, "equation 2 has 1 terms, want 2"},
		{"NaN y", []eq{{[]float64{1, 2}, math.NaN(), 1}}, Options{}, "equation 1: y NaN"},
		{"negative weight", []eq{{[]float64{1, 2}, 1, -1}}, Options{}, "weight -1"},
		{"infinite term", []eq{{[]float64{1, math.Inf(1)}, 1, 1}}, Options{}, "term 1 is +Inf"},
		{"prior size", []eq{{[]float64{1, 2}, 1, 1}}, Options{Prior: []float64{1}}, "prior of 1"},
		{"fixed size", []eq{{[]float64{1, 2}, 1, 1}}, Options{Fixed: []bool{true}}, "fixed of 1"},
		{"infinite prior", []eq{{[]float64{1, 2}, 1, 1}}, Options{Prior: []float64{1, math.Inf(-1)}}, "prior 1 is -Inf"},
		{"negative ridge", []eq{{[]float64{1, 2}, 1, 1}}, Options{Ridge: -1}, "ridge -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := problem(t, 2, tc.eqs).Solve(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestRepeatable: the same equations in the same order give the same bits,
// and a solve leaves the problem as it was.
func TestRepeatable(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	n, _ := New(4)
	for range 100 {
		x := []float64{rng.Float64(), rng.Float64() * 100, rng.Float64(), 1}
		n.Add(x, 3*x[0]+0.01*x[1]+rng.NormFloat64(), 1)
	}
	a, _ := n.Solve(Options{Ridge: 1e-3, Prior: []float64{1, 1, 1, 1}})
	b, _ := n.Solve(Options{Ridge: 1e-3, Prior: []float64{1, 1, 1, 1}})
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("solves differ: %v and %v", a, b)
		}
	}
}

func BenchmarkSolve(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, _ := New(8)
	x := make([]float64, 8)
	for range 1000 {
		for j := range x {
			x[j] = rng.Float64()
		}
		n.Add(x, rng.NormFloat64(), 1)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := n.Solve(Options{Ridge: 1e-3}); err != nil {
			b.Fatal(err)
		}
	}
}
