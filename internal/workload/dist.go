package workload

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Distribution types (docs/workload.md §5).
const (
	DistGaussian        = "gaussian"
	DistExponential     = "exponential"
	DistLognormal       = "lognormal"
	DistParetoLognormal = "pareto_lognormal"
	DistConstant        = "constant"
	DistEmpirical       = "empirical"
	DistUniform         = "uniform"
)

// MaxSampleTokens caps every length sample (2^22 = 4,194,304 tokens), so a
// heavy-tailed or mistyped distribution cannot exhaust memory with one prompt.
const MaxSampleTokens = 1 << 22

// distParams lists the required and optional parameters of each type.
func distParams(typ string) (required, optional []string, ok bool) {
	switch typ {
	case DistGaussian:
		return []string{"mean", "std_dev", "min", "max"}, nil, true
	case DistExponential:
		return []string{"mean"}, []string{"min", "max"}, true
	case DistLognormal:
		return []string{"mu", "sigma"}, []string{"min", "max"}, true
	case DistParetoLognormal:
		return []string{"alpha", "xm", "mu", "sigma", "mix_weight"}, nil, true
	case DistConstant:
		return []string{"value"}, nil, true
	case DistUniform:
		return []string{"min", "max"}, nil, true
	case DistEmpirical:
		return nil, nil, true
	}
	return nil, nil, false
}

func distTypeNames() string {
	return "constant, empirical, exponential, gaussian, lognormal, pareto_lognormal, uniform"
}

// lengthSampler draws token counts. Immutable after construction.
type lengthSampler struct {
	typ            string
	p1, p2, p3, p4 float64 // type-specific: see newLengthSampler
	mix            float64
	lo, hi         float64 // bounds applied before rounding (±Inf when absent)
	ilo, ihi       int64   // uniform bounds
	values         []int   // empirical support, ascending
	cdf            []float64
}

// newLengthSampler validates d and builds its sampler. path names d in errors
// (e.g. "clients[0].input_distribution"). loadFile reads an empirical file.
func newLengthSampler(path string, d *Distribution, baseDir string) (*lengthSampler, *Error) {
	required, optional, ok := distParams(d.Type)
	if !ok {
		if d.Type == "" {
			return nil, &Error{Path: path + ".type", Msg: "missing distribution type (valid: " + distTypeNames() + ")"}
		}
		return nil, &Error{Path: path + ".type", Msg: fmt.Sprintf("unknown distribution type %q (valid: %s)", d.Type, distTypeNames())}
	}
	if d.File != "" && d.Type != DistEmpirical {
		return nil, &Error{Path: path + ".file", Msg: fmt.Sprintf("file is only used by empirical distributions, not %s", d.Type)}
	}
	s := &lengthSampler{typ: d.Type, lo: math.Inf(-1), hi: math.Inf(1)}
	if d.Type == DistEmpirical {
		if err := s.initEmpirical(path, d, baseDir); err != nil {
			return nil, err
		}
		return s, nil
	}
	allowed := map[string]bool{}
	for _, k := range append(append([]string{}, required...), optional...) {
		allowed[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(d.Params)) {
		if !allowed[k] {
			return nil, &Error{Path: path + ".params." + k, Msg: fmt.Sprintf("unknown parameter for %s (valid: %s)", d.Type, strings.Join(append(append([]string{}, required...), optional...), ", "))}
		}
		if v := d.Params[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &Error{Path: path + ".params." + k, Msg: fmt.Sprintf("%g is not finite", v)}
		}
	}
	for _, k := range required {
		if _, ok := d.Params[k]; !ok {
			return nil, &Error{Path: path + ".params", Msg: fmt.Sprintf("%s distribution needs parameter %q", d.Type, k)}
		}
	}
	p := d.Params
	if lo, ok := p["min"]; ok {
		s.lo = lo
	}
	if hi, ok := p["max"]; ok {
		s.hi = hi
	}
	if s.lo > s.hi {
		return nil, &Error{Path: path + ".params.min", Msg: fmt.Sprintf("min %g exceeds max %g", s.lo, s.hi)}
	}
	nonNeg := func(name string) *Error {
		if p[name] < 0 {
			return &Error{Path: path + ".params." + name, Msg: fmt.Sprintf("%g must be >= 0", p[name])}
		}
		return nil
	}
	positive := func(name string) *Error {
		if !(p[name] > 0) {
			return &Error{Path: path + ".params." + name, Msg: fmt.Sprintf("%g must be > 0", p[name])}
		}
		return nil
	}
	switch d.Type {
	case DistGaussian:
		s.p1, s.p2 = p["mean"], p["std_dev"]
		if err := nonNeg("std_dev"); err != nil {
			return nil, err
		}
	case DistExponential:
		s.p1 = p["mean"]
		if err := positive("mean"); err != nil {
			return nil, err
		}
	case DistLognormal:
		s.p1, s.p2 = p["mu"], p["sigma"]
		if err := nonNeg("sigma"); err != nil {
			return nil, err
		}
	case DistParetoLognormal:
		s.p1, s.p2, s.p3, s.p4, s.mix = p["alpha"], p["xm"], p["mu"], p["sigma"], p["mix_weight"]
		for _, name := range []string{"alpha", "xm"} {
			if err := positive(name); err != nil {
				return nil, err
			}
		}
		if err := nonNeg("sigma"); err != nil {
			return nil, err
		}
		if s.mix < 0 || s.mix > 1 {
			return nil, &Error{Path: path + ".params.mix_weight", Msg: fmt.Sprintf("%g out of range [0, 1]", s.mix)}
		}
	case DistConstant:
		s.p1 = p["value"]
	case DistUniform:
		for _, name := range []string{"min", "max"} {
			if p[name] != math.Trunc(p[name]) || math.Abs(p[name]) > MaxSampleTokens {
				return nil, &Error{Path: path + ".params." + name, Msg: fmt.Sprintf("%g is not a whole number of tokens", p[name])}
			}
		}
		s.ilo, s.ihi = int64(p["min"]), int64(p["max"])
	}
	return s, nil
}

// initEmpirical builds the discrete distribution from params or a file.
func (s *lengthSampler) initEmpirical(path string, d *Distribution, baseDir string) *Error {
	if d.File != "" && len(d.Params) > 0 {
		return &Error{Path: path, Msg: "empirical distribution takes params or file, not both"}
	}
	weights := map[int]float64{}
	if d.File != "" {
		w, err := loadEmpiricalFile(d.File, baseDir)
		if err != nil {
			return &Error{Path: path + ".file", Err: err}
		}
		weights = w
	} else {
		if len(d.Params) == 0 {
			return &Error{Path: path, Msg: "empirical distribution needs params (\"<token count>\": weight) or file"}
		}
		for _, k := range slices.Sorted(maps.Keys(d.Params)) {
			n, err := strconv.ParseInt(strings.TrimSpace(k), 10, 64)
			if err != nil || n < 0 || n > MaxSampleTokens {
				return &Error{Path: path + ".params." + k, Msg: fmt.Sprintf("key %q is not a token count in [0, %d]", k, MaxSampleTokens)}
			}
			v := d.Params[k]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &Error{Path: path + ".params." + k, Msg: fmt.Sprintf("%g is not finite", v)}
			}
			if v < 0 {
				return &Error{Path: path + ".params." + k, Msg: fmt.Sprintf("weight %g is negative: a weight is a share, 0 or more", v)}
			}
			weights[int(n)] += v
		}
	}
	return s.setWeights(path, weights)
}

// setWeights keeps positive weights and builds the normalised CDF.
func (s *lengthSampler) setWeights(path string, weights map[int]float64) *Error {
	for v, w := range weights {
		if w > 0 {
			s.values = append(s.values, v)
		}
	}
	sort.Ints(s.values) // before summing: a float sum must not depend on map order
	total := 0.0
	for _, v := range s.values {
		total += weights[v]
	}
	if len(s.values) == 0 || math.IsInf(total, 0) {
		return &Error{Path: path, Msg: "empirical distribution has no positive finite weight"}
	}
	s.cdf = make([]float64, len(s.values))
	cum := 0.0
	for i, v := range s.values {
		cum += weights[v] / total
		s.cdf[i] = cum
	}
	s.cdf[len(s.cdf)-1] = 1
	return nil
}

// sample draws one token count: rounded half away from zero, in [1, MaxSampleTokens].
func (s *lengthSampler) sample(r *rand.Rand) int {
	var x float64
	switch s.typ {
	case DistGaussian:
		if s.lo == s.hi {
			return toTokens(s.lo)
		}
		x = s.p1 + s.p2*r.NormFloat64()
	case DistExponential:
		x = s.p1 * r.ExpFloat64()
	case DistLognormal:
		x = math.Exp(s.p1 + s.p2*r.NormFloat64())
	case DistParetoLognormal:
		if r.Float64() < s.mix {
			// Pareto by inversion: xm / U^(1/alpha), U in (0, 1].
			u := 1 - r.Float64()
			x = s.p2 / math.Pow(u, 1/s.p1)
		} else {
			x = math.Exp(s.p3 + s.p4*r.NormFloat64())
		}
	case DistConstant:
		return toTokens(s.p1)
	case DistUniform:
		return toTokens(float64(s.ilo + r.Int64N(s.ihi-s.ilo+1)))
	case DistEmpirical:
		if len(s.values) == 1 {
			return toTokens(float64(s.values[0]))
		}
		u := r.Float64()
		i := sort.SearchFloat64s(s.cdf, u)
		if i >= len(s.values) {
			i = len(s.values) - 1
		}
		return toTokens(float64(s.values[i]))
	}
	return toTokens(math.Min(s.hi, math.Max(s.lo, x)))
}

// sampleRatio draws a reason ratio: sample / 100 clamped to [0, 1].
func (s *lengthSampler) sampleRatio(r *rand.Rand) float64 {
	return math.Min(1, math.Max(0, float64(s.sample(r))/100))
}

func toTokens(x float64) int {
	if math.IsNaN(x) {
		return 1
	}
	x = math.Round(x)
	if x < 1 {
		return 1
	}
	if x > MaxSampleTokens {
		return MaxSampleTokens
	}
	return int(x)
}
