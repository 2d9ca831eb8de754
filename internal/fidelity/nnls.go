package fidelity

import (
	"errors"
	"math"
)

// lsq accumulates a weighted least-squares problem min Σ wᵢ(aᵢ·θ − yᵢ)² in
// normal-equation form, for non-negative solutions (every latency
// coefficient is a cost, so none may be negative).
type lsq struct {
	p    int
	g    []float64 // p×p, AᵀWA
	c    []float64 // AᵀWy
	yy   float64   // Σ w y²
	rows int
}

func newLSQ(p int) *lsq { return &lsq{p: p, g: make([]float64, p*p), c: make([]float64, p)} }

// add one equation a·θ = y with weight w.
func (l *lsq) add(a []float64, y, w float64) {
	for i, ai := range a {
		if ai == 0 {
			continue
		}
		wa := w * ai
		l.c[i] += wa * y
		row := l.g[i*l.p:]
		for j := i; j < l.p; j++ {
			row[j] += wa * a[j]
		}
	}
	l.yy += w * y * y
	l.rows++
}

// solve returns the non-negative θ minimising the weighted squares, with a
// ridge pull of strength ridge (relative to each column's scale) towards
// prior (nil = zero) and columns marked in fixed held at prior. Columns that
// no equation touches stay at their prior value.
func (l *lsq) solve(prior []float64, fixed []bool, ridge float64) ([]float64, error) {
	p := l.p
	g := make([]float64, p*p)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			g[i*p+j] = l.g[i*p+j]
			g[j*p+i] = l.g[i*p+j]
		}
	}
	c := append([]float64(nil), l.c...)
	pri := make([]float64, p)
	copy(pri, prior)
	free := make([]bool, p)
	scale := make([]float64, p)
	for i := 0; i < p; i++ {
		scale[i] = math.Sqrt(g[i*p+i])
		free[i] = scale[i] > 0 && (fixed == nil || !fixed[i])
	}
	// Move fixed (and untouched) columns to the right-hand side.
	for j := 0; j < p; j++ {
		if free[j] || pri[j] == 0 {
			continue
		}
		for i := 0; i < p; i++ {
			c[i] -= g[i*p+j] * pri[j]
		}
	}
	idx := []int{}
	for i := 0; i < p; i++ {
		if free[i] {
			idx = append(idx, i)
		}
	}
	k := len(idx)
	out := append([]float64(nil), pri...)
	if k == 0 {
		return out, nil
	}
	// Scaled sub-problem: z = s·θ, G' = G/(sᵢsⱼ), c' = c/s.
	gs := make([]float64, k*k)
	cs := make([]float64, k)
	for a, i := range idx {
		cs[a] = c[i] / scale[i]
		for b, j := range idx {
			gs[a*k+b] = g[i*p+j] / (scale[i] * scale[j])
		}
		gs[a*k+a] += ridge
		cs[a] += ridge * pri[i] * scale[i]
	}
	z, err := nnlsNormal(gs, cs, k)
	if err != nil {
		return nil, err
	}
	for a, i := range idx {
		out[i] = z[a] / scale[i]
	}
	return out, nil
}

// nnlsNormal solves min ½zᵀGz − cᵀz subject to z ≥ 0 (Lawson–Hanson active
// set on the normal equations; G is k×k symmetric positive semi-definite).
func nnlsNormal(g, c []float64, k int) ([]float64, error) {
	z := make([]float64, k)
	passive := make([]bool, k)
	grad := func(w []float64) {
		for i := 0; i < k; i++ {
			s := c[i]
			for j := 0; j < k; j++ {
				s -= g[i*k+j] * z[j]
			}
			w[i] = s
		}
	}
	w := make([]float64, k)
	for outer := 0; outer < 3*k+10; outer++ {
		grad(w)
		best, bi := 1e-12, -1
		for i := 0; i < k; i++ {
			if !passive[i] && w[i] > best {
				best, bi = w[i], i
			}
		}
		if bi < 0 {
			return z, nil
		}
		passive[bi] = true
		for inner := 0; inner < 3*k+10; inner++ {
			s, err := solvePassive(g, c, passive, k)
			if err != nil {
				return nil, err
			}
			ok := true
			for i := 0; i < k; i++ {
				if passive[i] && s[i] <= 0 {
					ok = false
				}
			}
			if ok {
				copy(z, s)
				break
			}
			alpha := math.Inf(1)
			for i := 0; i < k; i++ {
				if passive[i] && s[i] <= 0 && z[i]-s[i] > 0 {
					alpha = min(alpha, z[i]/(z[i]-s[i]))
				}
			}
			if math.IsInf(alpha, 1) {
				alpha = 0
			}
			for i := 0; i < k; i++ {
				if passive[i] {
					z[i] += alpha * (s[i] - z[i])
					if z[i] <= 1e-15 {
						z[i] = 0
						passive[i] = false
					}
				}
			}
		}
	}
	return z, nil
}

// solvePassive solves G_PP s_P = c_P by Cholesky; other entries are 0.
func solvePassive(g, c []float64, passive []bool, k int) ([]float64, error) {
	var idx []int
	for i := 0; i < k; i++ {
		if passive[i] {
			idx = append(idx, i)
		}
	}
	n := len(idx)
	a := make([]float64, n*n)
	b := make([]float64, n)
	for x, i := range idx {
		b[x] = c[i]
		for y, j := range idx {
			a[x*n+y] = g[i*k+j]
		}
		a[x*n+x] += 1e-12 // keeps the factorisation defined for tied columns
	}
	for j := 0; j < n; j++ {
		d := a[j*n+j]
		for m := 0; m < j; m++ {
			d -= a[j*n+m] * a[j*n+m]
		}
		if d <= 0 {
			return nil, errors.New("fidelity: least squares: matrix is not positive definite")
		}
		d = math.Sqrt(d)
		a[j*n+j] = d
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for m := 0; m < j; m++ {
				s -= a[i*n+m] * a[j*n+m]
			}
			a[i*n+j] = s / d
		}
	}
	for i := 0; i < n; i++ {
		s := b[i]
		for m := 0; m < i; m++ {
			s -= a[i*n+m] * b[m]
		}
		b[i] = s / a[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		s := b[i]
		for m := i + 1; m < n; m++ {
			s -= a[m*n+i] * b[m]
		}
		b[i] = s / a[i*n+i]
	}
	out := make([]float64, k)
	for x, i := range idx {
		out[i] = b[x]
	}
	return out, nil
}
