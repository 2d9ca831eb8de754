package workload

import (
	"fmt"
	"math"
)

// RateRamp (Ours) ramps the total request rate from StartRPS to EndRPS over
// the num_requests requests of the run, as vllm bench serve's
// --ramp-up-strategy does: request i (0-based, of N) arrives at rate
// start + (end − start)·i/(N − 1) (linear) or start·(end/start)^(i/(N − 1))
// (exponential), its inter-arrival time drawn from the client's process at
// that rate. A client with share f of the total rate counts its own
// arrivals: its k-th stands for request k/f of the whole run.
type RateRamp struct {
	Strategy         string // linear or exponential
	StartRPS, EndRPS float64
}

// Ramp strategies.
const (
	RampLinear      = "linear"
	RampExponential = "exponential"
)

type rawRamp struct {
	Strategy string   `yaml:"strategy"`
	StartRPS *float64 `yaml:"start_rps"`
	EndRPS   *float64 `yaml:"end_rps"`
}

// checkRamp validates a ramp (path names it in errors).
func checkRamp(r *RateRamp, path string) *Error {
	switch r.Strategy {
	case RampLinear, RampExponential:
	default:
		return &Error{Path: path + ".strategy", Msg: fmt.Sprintf("unknown ramp strategy %q (valid: linear, exponential)", r.Strategy)}
	}
	for _, v := range []struct {
		name string
		x    float64
	}{{"start_rps", r.StartRPS}, {"end_rps", r.EndRPS}} {
		if !(v.x > 0) || math.IsInf(v.x, 0) {
			return &Error{Path: path + "." + v.name, Msg: fmt.Sprintf("%g must be finite and > 0", v.x)}
		}
	}
	if r.StartRPS > r.EndRPS {
		return &Error{Path: path, Msg: fmt.Sprintf("start_rps %g exceeds end_rps %g", r.StartRPS, r.EndRPS)}
	}
	return nil
}

// Rate is the total rate at request i of n (i clamped to the run).
func (r *RateRamp) Rate(i float64, n int64) float64 {
	p := 0.0
	if n > 1 {
		p = min(max(i, 0), float64(n-1)) / float64(n-1)
	}
	if r.Strategy == RampExponential {
		return r.StartRPS * math.Pow(r.EndRPS/r.StartRPS, p)
	}
	return r.StartRPS + (r.EndRPS-r.StartRPS)*p
}

// stretch turns an inter-arrival time drawn at the ramp's start rate into
// one at the rate of a client's k-th arrival (share f of the total rate).
func (r *RateRamp) stretch(iatUs, k int64, f float64, n int64) int64 {
	at := float64(k)
	if f > 0 {
		at /= f
	}
	return iatFromFloat(float64(iatUs) * r.StartRPS / r.Rate(at, n))
}
