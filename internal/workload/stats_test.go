package workload

import (
	"math"
	"sort"
	"testing"
)

// Helpers for the statistical tests: moments, Kolmogorov–Smirnov distance
// and the CDFs they compare against.

func moments(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// ksDistance is sup |F_n(x) − F(x)| over the sample points, checking both
// sides of each jump of the empirical CDF. For integer data pass a cdf that
// is the discrete CDF P(X ≤ k); then ties are handled by evaluating the
// empirical CDF after the last copy of each value.
func ksDistance(xs []float64, cdf func(float64) float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := float64(len(s))
	d := 0.0
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		f := cdf(s[i])
		d = math.Max(d, math.Abs(float64(j)/n-f))
		// Just below s[i]: the empirical CDF is i/n, the true CDF F(s[i]−).
		d = math.Max(d, math.Abs(float64(i)/n-cdfBelow(cdf, s[i])))
		i = j
	}
	return d
}

// cdfBelow approximates F(x−): for integer data, F(x − 1).
func cdfBelow(cdf func(float64) float64, x float64) float64 {
	if x == math.Trunc(x) {
		return cdf(x - 1)
	}
	return cdf(math.Nextafter(x, math.Inf(-1)))
}

// ksBound is the 0.1% critical value 1.95/√n of the one-sample KS test. The
// seeds are fixed, so a pass is deterministic; the bound says the sample is
// not distinguishable from the law at that level.
func ksBound(n int) float64 { return 1.95 / math.Sqrt(float64(n)) }

func normalCDF(x, mu, sigma float64) float64 {
	return 0.5 * (1 + math.Erf((x-mu)/(sigma*math.Sqrt2)))
}

// gammaP is the regularised lower incomplete gamma function P(a, x), by its
// series for x < a + 1 and by Lentz's continued fraction for Q otherwise.
func gammaP(a, x float64) float64 {
	if x <= 0 {
		return 0
	}
	lg, _ := math.Lgamma(a)
	logPre := -x + a*math.Log(x) - lg
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1; n < 10000; n++ {
			term *= x / (a + float64(n))
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-15 {
				break
			}
		}
		return sum * math.Exp(logPre)
	}
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1; i < 10000; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return 1 - math.Exp(logPre)*h
}

func TestGammaPKnownValues(t *testing.T) {
	tests := []struct{ a, x, want float64 }{
		{1, 1, 1 - math.Exp(-1)},             // exponential
		{1, 3, 1 - math.Exp(-3)},             // continued-fraction branch
		{0.5, 0.5, math.Erf(math.Sqrt(0.5))}, // P(1/2, x) = erf(√x)
		{3, 2, 1 - math.Exp(-2)*(1+2+2)},     // Erlang: 1 − e^−x Σ x^k/k!
	}
	for _, tt := range tests {
		if got := gammaP(tt.a, tt.x); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("gammaP(%g, %g) = %.15f, want %.15f", tt.a, tt.x, got, tt.want)
		}
	}
}

// assertClose fails when got is not within rel of want.
func assertClose(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s = %.6g, want %.6g ± %.1f%%", what, got, want, rel*100)
	}
}
