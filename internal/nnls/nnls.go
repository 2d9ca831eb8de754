package nnls

import (
	"errors"
	"fmt"
	"math"
)

// Problem accumulates a weighted least-squares problem
//
//	minimise Σ wᵢ(xᵢ·θ − yᵢ)²  subject to θ ≥ 0
//
// in normal-equation form. The zero value is not usable; call [New].
type Problem struct {
	p    int
	g    []float64 // p×p, row-major, upper triangle accumulated
	b    []float64 // Σ w·x·y
	rows int       // equations accepted
	err  error     // the first bad equation, reported by Solve
}

// New returns an empty problem in p unknowns.
func New(p int) (*Problem, error) {
	if p < 1 {
		return nil, fmt.Errorf("nnls: %d unknowns, want at least 1", p)
	}
	return &Problem{p: p, g: make([]float64, p*p), b: make([]float64, p)}, nil
}

// Add accumulates one equation x·θ ≈ y with weight w ≥ 0 (1/y² makes the
// problem one of relative error). A malformed equation (len(x) ≠ p, a value
// that is not finite, a negative weight) is left out, and the first one is
// reported by Solve, so that callers can add rows in a loop without
// checking each.
func (n *Problem) Add(x []float64, y, w float64) {
	if err := n.check(x, y, w); err != nil {
		if n.err == nil {
			n.err = err
		}
		return
	}
	n.rows++
	for i, xi := range x {
		if xi == 0 {
			continue
		}
		wx := w * xi
		n.b[i] += wx * y
		row := n.g[i*n.p:]
		for j := i; j < n.p; j++ {
			row[j] += wx * x[j]
		}
	}
}

func (n *Problem) check(x []float64, y, w float64) error {
	eq := n.rows + 1
	if len(x) != n.p {
		return fmt.Errorf("nnls: equation %d has %d terms, want %d", eq, len(x), n.p)
	}
	if !finite(y) || !finite(w) || w < 0 {
		return fmt.Errorf("nnls: equation %d: y %v, weight %v: want finite values and a weight ≥ 0", eq, y, w)
	}
	for j, v := range x {
		if !finite(v) {
			return fmt.Errorf("nnls: equation %d: term %d is %v", eq, j, v)
		}
	}
	return nil
}

// Options shape a solve. The zero value is plain non-negative least squares.
type Options struct {
	// Prior is where the ridge pulls each unknown, and the value of the
	// unknowns that are fixed or that no equation touches (nil = all 0).
	// Values must be finite; only the free unknowns are kept ≥ 0, so a
	// held unknown may stay negative.
	Prior []float64
	// Fixed marks unknowns held at their prior (nil = none).
	Fixed []bool
	// Ridge adds Ridge·Gᵢᵢ·(θᵢ − Priorᵢ)² to the objective: a pull towards
	// the prior relative to each column's own scale Gᵢᵢ = Σ w·xᵢ², so a
	// small Ridge (1e-3) settles only the directions the equations leave
	// (nearly) undetermined. 0 = none.
	Ridge float64
}

// Solve returns the non-negative θ that minimises
//
//	Σ w(x·θ − y)² + Ridge·Σᵢ Gᵢᵢ(θᵢ − Priorᵢ)²
//
// over the free unknowns, the others at their prior. An unknown whose column
// is all zero is not free: it keeps its prior. The problem is not changed,
// so more equations may be added and solved again.
func (n *Problem) Solve(o Options) ([]float64, error) {
	if n.err != nil {
		return nil, n.err
	}
	p := n.p
	if (o.Prior != nil && len(o.Prior) != p) || (o.Fixed != nil && len(o.Fixed) != p) {
		return nil, fmt.Errorf("nnls: prior of %d and fixed of %d values for %d unknowns", len(o.Prior), len(o.Fixed), p)
	}
	if !finite(o.Ridge) || o.Ridge < 0 {
		return nil, fmt.Errorf("nnls: ridge %v must be finite and ≥ 0", o.Ridge)
	}
	theta := make([]float64, p)
	for i, v := range o.Prior {
		if !finite(v) {
			return nil, fmt.Errorf("nnls: prior %d is %v, want a finite value", i, v)
		}
		theta[i] = v
	}
	// G in full (the accumulation keeps the upper triangle).
	g := make([]float64, p*p)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			g[i*p+j], g[j*p+i] = n.g[i*p+j], n.g[i*p+j]
		}
	}
	// Held unknowns move to the right-hand side: b − G·θ_held.
	b := append([]float64(nil), n.b...)
	var free []int
	for j := 0; j < p; j++ {
		if d := g[j*p+j]; d > 0 && !math.IsInf(d, 0) && (o.Fixed == nil || !o.Fixed[j]) {
			free = append(free, j)
			continue
		}
		if theta[j] != 0 {
			for i := 0; i < p; i++ {
				b[i] -= g[i*p+j] * theta[j]
			}
		}
	}
	k := len(free)
	if k == 0 {
		return theta, nil
	}
	// Scaled sub-problem over the free unknowns: z = sᵢθᵢ with sᵢ = √Gᵢᵢ,
	// so G' = G/(sᵢsⱼ) has a unit diagonal, b' = b/s, and the ridge adds
	// Ridge to the diagonal and Ridge·sᵢ·Priorᵢ to b'.
	scale := make([]float64, k)
	for a, i := range free {
		scale[a] = math.Sqrt(g[i*p+i])
	}
	gs := make([]float64, k*k)
	bs := make([]float64, k)
	for a, i := range free {
		for c, j := range free {
			gs[a*k+c] = g[i*p+j] / (scale[a] * scale[c])
		}
		gs[a*k+a] += o.Ridge
		bs[a] = b[i]/scale[a] + o.Ridge*theta[i]*scale[a]
	}
	z, err := lawsonHanson(gs, bs, k)
	if err != nil {
		return nil, err
	}
	for a, i := range free {
		theta[i] = z[a] / scale[a]
	}
	return theta, nil
}

// tol is the gradient a free unknown must exceed to enter the passive set,
// and the value below which a passive one leaves it, in the scaled
// coordinates (where the diagonal is 1).
const tol = 1e-12

// lawsonHanson minimises ½zᵀGz − bᵀz over z ≥ 0 for a symmetric positive
// semi-definite k×k G (row-major): Lawson and Hanson's active-set method on
// the normal equations. The passive set P holds the unknowns free to move;
// each outer step adds the one whose negative gradient (b − Gz) is largest
// and positive, and the inner loop solves G_PP·s_P = b_P, stepping back
// along z → s to the first unknown that would turn negative and dropping it,
// until s is feasible.
func lawsonHanson(g, b []float64, k int) ([]float64, error) {
	z := make([]float64, k)
	w := make([]float64, k)
	passive := make([]bool, k)
	for outer := 0; outer < 10*k+10; outer++ {
		for i := 0; i < k; i++ {
			s := b[i]
			for j := 0; j < k; j++ {
				s -= g[i*k+j] * z[j]
			}
			w[i] = s
		}
		j, best := -1, tol
		for i := 0; i < k; i++ {
			if !passive[i] && w[i] > best {
				j, best = i, w[i]
			}
		}
		if j < 0 {
			return z, nil
		}
		passive[j] = true
		for inner := 0; inner < 10*k+10; inner++ {
			s, err := solvePassive(g, b, passive, k)
			if err != nil {
				return nil, err
			}
			alpha, blocked := 1.0, false
			for i := 0; i < k; i++ {
				if passive[i] && s[i] <= 0 {
					blocked = true
					if d := z[i] - s[i]; d > 0 {
						alpha = min(alpha, z[i]/d)
					} else {
						alpha = 0
					}
				}
			}
			if !blocked {
				copy(z, s)
				break
			}
			for i := 0; i < k; i++ {
				if !passive[i] {
					continue
				}
				z[i] += alpha * (s[i] - z[i])
				if z[i] <= tol {
					z[i], passive[i] = 0, false
				}
			}
		}
	}
	return z, nil
}

// solvePassive solves G_PP·s_P = b_P by Cholesky (s = 0 off P). A pivot
// that vanishes (a passive column the others already span) is clamped, so
// the solve makes no move along that direction instead of failing.
func solvePassive(g, b []float64, passive []bool, k int) ([]float64, error) {
	var idx []int
	for i := 0; i < k; i++ {
		if passive[i] {
			idx = append(idx, i)
		}
	}
	m := len(idx)
	l := make([]float64, m*m)
	for a := 0; a < m; a++ {
		for c := 0; c <= a; c++ {
			s := g[idx[a]*k+idx[c]]
			for e := 0; e < c; e++ {
				s -= l[a*m+e] * l[c*m+e]
			}
			if a == c {
				l[a*m+a] = math.Sqrt(max(s, 1e-14))
			} else {
				l[a*m+c] = s / l[c*m+c]
			}
		}
	}
	y := make([]float64, m)
	for a := 0; a < m; a++ {
		s := b[idx[a]]
		for e := 0; e < a; e++ {
			s -= l[a*m+e] * y[e]
		}
		y[a] = s / l[a*m+a]
	}
	out := make([]float64, k)
	for a := m - 1; a >= 0; a-- {
		s := y[a]
		for e := a + 1; e < m; e++ {
			s -= l[e*m+a] * out[idx[e]]
		}
		x := s / l[a*m+a]
		if !finite(x) {
			return nil, errors.New("nnls: the equations are degenerate")
		}
		out[idx[a]] = x
	}
	return out, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
