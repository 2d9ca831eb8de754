package fit

import (
	"errors"
	"math"
)

// normal accumulates the normal equations of a weighted least-squares
// problem: G = Σ w·x·xᵀ, b = Σ w·x·y, over rows (x, y, w).
type normal struct {
	p  int
	g  []float64 // p×p, row-major
	b  []float64
	yy float64 // Σ w·y²
}

func newNormal(p int) *normal {
	return &normal{p: p, g: make([]float64, p*p), b: make([]float64, p)}
}

// add accumulates one equation x·θ ≈ y with weight w.
func (n *normal) add(x []float64, y, w float64) {
	n.yy += w * y * y
	for i := 0; i < n.p; i++ {
		if x[i] == 0 {
			continue
		}
		wx := w * x[i]
		n.b[i] += wx * y
		row := n.g[i*n.p:]
		for j := i; j < n.p; j++ {
			row[j] += wx * x[j]
		}
	}
}

// rmsRelative is √(Σ w(x·θ − y)² / Σ w·y²): with w = 1/y², the RMS relative
// error of the equations at θ.
func (n *normal) rmsRelative(theta []float64) float64 {
	if n.yy == 0 {
		return 0
	}
	q := n.yy
	for i := 0; i < n.p; i++ {
		q -= 2 * theta[i] * n.b[i]
		for j := 0; j < n.p; j++ {
			q += theta[i] * n.g[i*n.p+j] * theta[j]
		}
	}
	return math.Sqrt(max(q, 0) / n.yy)
}

// symmetric fills the lower triangle from the upper one.
func (n *normal) symmetric() {
	for i := 0; i < n.p; i++ {
		for j := 0; j < i; j++ {
			n.g[i*n.p+j] = n.g[j*n.p+i]
		}
	}
}

// solveNNLS minimises Σ w(x·θ − y)² + ridge·Σ gᵢᵢ(θᵢ − priorᵢ)² subject to
// θ ≥ 0. The ridge is relative to each column's own scale gᵢᵢ, so it pulls
// only directions the data leave (nearly) undetermined. A parameter whose
// column is all zero keeps its prior. It is Lawson and Hanson's active-set
// method on the normal equations, in coordinates scaled to a unit diagonal.
func (n *normal) solveNNLS(prior []float64, ridge float64) ([]float64, error) {
	n.symmetric()
	p := n.p
	scale := make([]float64, p)
	var free []int
	for i := 0; i < p; i++ {
		if d := n.g[i*p+i]; d > 0 && !math.IsInf(d, 0) {
			scale[i] = 1 / math.Sqrt(d)
			free = append(free, i)
		}
	}
	theta := append([]float64(nil), prior...)
	if len(free) == 0 {
		return theta, nil
	}
	// Scaled problem over the free parameters: z = θ/scale.
	k := len(free)
	g := make([]float64, k*k)
	b := make([]float64, k)
	for a, i := range free {
		for c, j := range free {
			g[a*k+c] = n.g[i*p+j] * scale[i] * scale[j]
		}
		g[a*k+a] += ridge
		b[a] = n.b[i]*scale[i] + ridge*prior[i]/scale[i]
		// Parameters without a column (fixed at their prior) contribute
		// nothing: their columns are zero.
	}
	z, err := lawsonHanson(g, b, k)
	if err != nil {
		return nil, err
	}
	for a, i := range free {
		theta[i] = z[a] * scale[i]
	}
	return theta, nil
}

// lawsonHanson minimises ½zᵀGz − bᵀz over z ≥ 0 for a symmetric positive
// semi-definite k×k G.
func lawsonHanson(g, b []float64, k int) ([]float64, error) {
	const tol = 1e-12
	z := make([]float64, k)
	passive := make([]bool, k)
	w := make([]float64, k)
	for iter := 0; iter < 10*k+10; iter++ {
		gradient(g, b, z, w, k)
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
					if a := z[i] / (z[i] - s[i]); a < alpha {
						alpha = a
					}
					blocked = true
				}
			}
			if !blocked {
				copy(z, s)
				break
			}
			for i := 0; i < k; i++ {
				z[i] += alpha * (s[i] - z[i])
				if passive[i] && z[i] <= tol {
					z[i], passive[i] = 0, false
				}
			}
		}
	}
	return z, nil
}

// gradient sets w = b − Gz (the negative gradient).
func gradient(g, b, z, w []float64, k int) {
	for i := 0; i < k; i++ {
		s := b[i]
		for j := 0; j < k; j++ {
			s -= g[i*k+j] * z[j]
		}
		w[i] = s
	}
}

// solvePassive solves G_PP·s_P = b_P (s = 0 off P) by Cholesky.
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
				if s <= 1e-14 {
					s = 1e-14 // a direction the data do not determine: no move along it
				}
				l[a*m+a] = math.Sqrt(s)
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
	x := make([]float64, m)
	for a := m - 1; a >= 0; a-- {
		s := y[a]
		for e := a + 1; e < m; e++ {
			s -= l[e*m+a] * x[e]
		}
		x[a] = s / l[a*m+a]
	}
	out := make([]float64, k)
	for a, i := range idx {
		if math.IsNaN(x[a]) || math.IsInf(x[a], 0) {
			return nil, errors.New("least squares: the equations are degenerate")
		}
		out[i] = x[a]
	}
	return out, nil
}
