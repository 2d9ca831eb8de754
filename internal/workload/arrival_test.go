package workload

import (
	"math"
	"slices"
	"testing"
)

func TestArrivalProcessesStatistics(t *testing.T) {
	const n = 50000
	const rate = 10.0 // per second: mean IAT 100 ms, so integer truncation is negligible
	m := 1 / (rate / 1e6)
	weibullCDF := func(cv float64) func(float64) float64 {
		k, err := weibullShapeForCV(cv)
		if err != nil {
			t.Fatal(err)
		}
		lambda := m / math.Gamma(1+1/k)
		return func(x float64) float64 { return 1 - math.Exp(-math.Pow(x/lambda, k)) }
	}
	tests := []struct {
		name     string
		arr      Arrival
		mean, sd float64
		meanTol  float64 // relative
		varTol   float64 // relative
		cdf      func(x float64) float64
	}{
		{"poisson", Arrival{Process: ProcessPoisson}, m, m, 0.02, 0.05,
			func(x float64) float64 { return 1 - math.Exp(-x/m) }},
		{"gamma cv 1 default", Arrival{Process: ProcessGamma}, m, m, 0.02, 0.05,
			func(x float64) float64 { return gammaP(1, x/m) }},
		{"gamma cv 2", Arrival{Process: ProcessGamma, CV: 2}, m, 2 * m, 0.04, 0.15,
			func(x float64) float64 { return gammaP(0.25, x/(4*m)) }},
		{"gamma cv 0.5", Arrival{Process: ProcessGamma, CV: 0.5}, m, 0.5 * m, 0.01, 0.04,
			func(x float64) float64 { return gammaP(4, x/(0.25*m)) }},
		{"gamma shape+scale ignores rate", Arrival{Process: ProcessGamma, Shape: 2, Scale: 5000}, 10000, math.Sqrt(2) * 5000, 0.02, 0.05,
			func(x float64) float64 { return gammaP(2, x/5000) }},
		{"weibull cv 1", Arrival{Process: ProcessWeibull}, m, m, 0.02, 0.06, weibullCDF(1)},
		{"weibull cv 0.6", Arrival{Process: ProcessWeibull, CV: 0.6}, m, 0.6 * m, 0.01, 0.05, weibullCDF(0.6)},
		{"weibull cv 2", Arrival{Process: ProcessWeibull, CV: 2}, m, 2 * m, 0.05, 0.25, weibullCDF(2)},
		{"weibull shape+scale", Arrival{Process: ProcessWeibull, Shape: 1.5, Scale: 20000}, 20000 * math.Gamma(1+1/1.5),
			20000 * math.Sqrt(math.Gamma(1+2/1.5)-math.Pow(math.Gamma(1+1/1.5), 2)), 0.02, 0.05,
			func(x float64) float64 { return 1 - math.Exp(-math.Pow(x/20000, 1.5)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newArrivalSampler(tt.arr, rate)
			if err != nil {
				t.Fatal(err)
			}
			r := NewStream(7, "test/"+tt.name)
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(s.next(r))
			}
			mean, variance := moments(xs)
			assertClose(t, "mean", mean, tt.mean, tt.meanTol)
			assertClose(t, "variance", variance, tt.sd*tt.sd, tt.varTol)
			// IATs are max(1, ⌊X⌋): P(IAT ≤ k) = F(k + 1) for k ≥ 1, else 0.
			d := ksDistance(xs, func(k float64) float64 {
				if k < 1 {
					return 0
				}
				return tt.cdf(k + 1)
			})
			if d > ksBound(n) {
				t.Errorf("KS distance = %.4f, want <= %.4f", d, ksBound(n))
			}
		})
	}
}

func TestConstantArrivalIsFloorOfMean(t *testing.T) {
	// docs/workload.md §4: rate 5/s → 199999 µs, arrivals at 199999, 399998, …
	s, err := newArrivalSampler(Arrival{Process: ProcessConstant}, 5)
	if err != nil {
		t.Fatal(err)
	}
	r := NewStream(1, "x")
	for i := 0; i < 3; i++ {
		if got := s.next(r); got != 199999 {
			t.Fatalf("IAT %d = %d, want 199999", i, got)
		}
	}
	w := mustResolve(t, Options{Rate: ptr(5.0), NumRequests: ptr(int64(3))})
	var got []int64
	src := w.NewSource()
	for r, ok := src.Next(); ok; r, ok = src.Next() {
		got = append(got, r.ArrivalUs)
	}
	want := []int64{199999, 399998, 599997}
	if !slices.Equal(got, want) {
		t.Errorf("arrivals = %v, want %v", got, want)
	}
}

func TestIATAtLeastOneMicrosecond(t *testing.T) {
	s, err := newArrivalSampler(Arrival{Process: ProcessPoisson}, 5e6) // mean 0.2 µs
	if err != nil {
		t.Fatal(err)
	}
	r := NewStream(3, "x")
	for i := 0; i < 1000; i++ {
		if got := s.next(r); got < 1 {
			t.Fatalf("IAT = %d, want >= 1", got)
		}
	}
}

func TestWeibullShapeSolvesCV(t *testing.T) {
	for _, cv := range []float64{0.01, 0.1, 0.6, 1, 2, 5, 10.4} {
		k, err := weibullShapeForCV(cv)
		if err != nil {
			t.Fatalf("cv %g: %v", cv, err)
		}
		if got := weibullCV(k); math.Abs(got-cv) > weibullCVTol {
			t.Errorf("cv %g: shape %g gives cv %g, want within %g", cv, k, got, weibullCVTol)
		}
	}
	// cv 1 is the exponential: shape 1.
	if k, _ := weibullShapeForCV(1); math.Abs(k-1) > 1e-3 {
		t.Errorf("shape for cv 1 = %g, want 1", k)
	}
	if _, err := weibullShapeForCV(11); err == nil {
		t.Error("cv 11: want an error")
	}
}
