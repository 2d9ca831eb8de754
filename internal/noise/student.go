package noise

import "math"

// TQuantile is the p-quantile of Student's t distribution with df degrees
// of freedom (df > 0, 0 < p < 1): the t with P(T ≤ t) = p. It inverts
// TCDF by bisection to within 1e-12 relative; NaN for arguments outside
// the domain.
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) || math.IsInf(df, 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for TCDF(hi, df) < p {
		lo, hi = hi, 2*hi
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if TCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// TCDF is P(T ≤ t) for Student's t with df degrees of freedom:
// 1 − ½·I_x(df/2, ½) for t ≥ 0, x = df/(df + t²), I the regularized
// incomplete beta function; symmetric about 0.
func TCDF(t, df float64) float64 {
	if math.IsNaN(t) || !(df > 0) {
		return math.NaN()
	}
	x := df / (df + t*t)
	tail := 0.5 * incBeta(df/2, 0.5, x)
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// incBeta is the regularized incomplete beta function I_x(a, b), by its
// continued fraction (evaluated with the modified Lentz method) on the side
// of x where it converges fast, and the symmetry I_x(a, b) = 1 − I_{1−x}(b, a)
// on the other.
func incBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction is the continued fraction of the incomplete beta function:
// 1/(1+ d1/(1+ d2/(1+ …))) with d_{2m+1} = −(a+m)(a+b+m)x/((a+2m)(a+2m+1))
// and d_{2m} = m(b−m)x/((a+2m−1)(a+2m)).
func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	step := func(coef float64) float64 {
		d = 1 + coef*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + coef/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1.0; m <= 1000; m++ {
		h *= step(m * (b - m) * x / ((a + 2*m - 1) * (a + 2*m)))
		del := step(-(a + m) * (a + b + m) * x / ((a + 2*m) * (a + 2*m + 1)))
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
