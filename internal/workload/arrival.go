package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Arrival process names (docs/workload.md §4).
const (
	ProcessPoisson  = "poisson"
	ProcessConstant = "constant"
	ProcessGamma    = "gamma"
	ProcessWeibull  = "weibull"
)

// Limits of the cv parameter. Gamma with cv > 10 (shape < 0.01) is rejected
// (BLIS silently falls back to Poisson); Weibull's range is where the
// bisection below can solve for the shape.
const (
	gammaMaxCV   = 10.0
	weibullMinCV = 0.01
	weibullMaxCV = 10.4
	// weibullCVTol is the accuracy of the solved shape, in units of cv.
	weibullCVTol = 1e-3
	// maxIATUs caps a single inter-arrival time (~3 years) so sums never
	// overflow int64.
	maxIATUs = int64(1) << 46
)

// arrivalSampler draws inter-arrival times in µs. All fields are fixed after
// construction; randomness comes from the caller's stream.
type arrivalSampler struct {
	process string
	meanUs  float64 // poisson, constant
	shape   float64 // gamma k, weibull k
	scale   float64 // gamma θ, weibull λ (µs)
}

// newArrivalSampler builds the sampler of a validated Arrival for a client
// rate in requests/s (or sessions/s for multi-turn clients).
func newArrivalSampler(a Arrival, ratePerS float64) (arrivalSampler, error) {
	// Mean IAT in µs, computed as 1/(rate per µs) like BLIS: at 5/s this is
	// 199999.99999999997, so constant arrivals come every 199999 µs.
	m := 1 / (ratePerS / 1e6)
	s := arrivalSampler{process: a.Process, meanUs: m}
	switch a.Process {
	case ProcessPoisson, ProcessConstant:
	case ProcessGamma:
		if a.Shape > 0 && a.Scale > 0 {
			s.shape, s.scale = a.Shape, a.Scale
			break
		}
		cv := a.CV
		if cv == 0 {
			cv = 1
		}
		s.shape = 1 / (cv * cv)
		s.scale = m * cv * cv
	case ProcessWeibull:
		if a.Shape > 0 && a.Scale > 0 {
			s.shape, s.scale = a.Shape, a.Scale
			break
		}
		cv := a.CV
		if cv == 0 {
			cv = 1
		}
		k, err := weibullShapeForCV(cv)
		if err != nil {
			return s, err
		}
		s.shape = k
		s.scale = m / math.Gamma(1+1/k)
	default:
		return s, fmt.Errorf("unknown arrival process %q", a.Process)
	}
	return s, nil
}

// next returns one IAT: the sample truncated to an integer, at least 1 µs.
func (s *arrivalSampler) next(r *rand.Rand) int64 {
	var x float64
	switch s.process {
	case ProcessPoisson:
		x = r.ExpFloat64() * s.meanUs
	case ProcessConstant:
		x = s.meanUs
	case ProcessGamma:
		x = sampleGamma(r, s.shape) * s.scale
	case ProcessWeibull:
		// Inverse CDF: λ·(−ln U)^(1/k); ExpFloat64 is −ln U.
		x = s.scale * math.Pow(r.ExpFloat64(), 1/s.shape)
	}
	return iatFromFloat(x)
}

func iatFromFloat(x float64) int64 {
	if !(x >= 1) { // also NaN
		return 1
	}
	if x >= float64(maxIATUs) {
		return maxIATUs
	}
	return int64(x)
}

// sampleGamma draws Gamma(k, 1) by Marsaglia and Tsang (2000): for k ≥ 1,
// with d = k − 1/3 and c = 1/√(9d), accept v = (1 + c·Z)³ when
// ln U < Z²/2 + d − d·v + d·ln v, and return d·v. For k < 1 it draws
// Gamma(k + 1) and multiplies by U^(1/k).
func sampleGamma(r *rand.Rand, k float64) float64 {
	if k < 1 {
		u := r.Float64()
		return sampleGamma(r, k+1) * math.Pow(u, 1/k)
	}
	d := k - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		z := r.NormFloat64()
		v := 1 + c*z
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		z2 := z * z
		if u < 1-0.0331*z2*z2 {
			return d * v
		}
		if math.Log(u) < 0.5*z2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// weibullCV is the coefficient of variation of a Weibull with shape k:
// √(Γ(1 + 2/k) / Γ(1 + 1/k)² − 1).
func weibullCV(k float64) float64 {
	g1 := math.Gamma(1 + 1/k)
	g2 := math.Gamma(1 + 2/k)
	return math.Sqrt(g2/(g1*g1) - 1)
}

// weibullShapeForCV solves weibullCV(k) = cv by bisection. The CV falls
// monotonically in k; on [0.1, 500] it spans about 430 down to 0.0026, which
// covers the accepted cv range [0.01, 10.4].
func weibullShapeForCV(cv float64) (float64, error) {
	if !(cv >= weibullMinCV && cv <= weibullMaxCV) {
		return 0, fmt.Errorf("weibull cv %g out of range [%g, %g]", cv, weibullMinCV, weibullMaxCV)
	}
	lo, hi := 0.1, 500.0
	for i := 0; i < 200; i++ {
		mid := (lo + hi) / 2
		got := weibullCV(mid)
		if math.Abs(got-cv) < weibullCVTol/10 {
			return mid, nil
		}
		if got > cv {
			lo = mid // too variable: larger shape
		} else {
			hi = mid
		}
	}
	k := (lo + hi) / 2
	if math.Abs(weibullCV(k)-cv) > weibullCVTol {
		return 0, fmt.Errorf("weibull cv %g: shape bisection did not converge", cv)
	}
	return k, nil
}
