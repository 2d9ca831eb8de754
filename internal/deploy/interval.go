package deploy

import (
	"math"
	"slices"

	"servesim/internal/des/instance"
	"servesim/internal/des/latency"
)

// IntervalZ is the standard normal quantile of a two-sided 90% interval:
// a run at step-time scale 1 ± IntervalZ·σ bounds 90% of the outcomes a
// model error ε ~ N(0, σ) allows.
const IntervalZ = 1.6448536269514722

// Sigma is the deployment's step-time uncertainty σ: step_time_sigma when
// given (a fitted file's), else the documented default of its latency
// model (latency.DefaultSigmaOf).
func (r *Resolved) Sigma() float64 {
	if r.StepTimeSigma > 0 {
		return r.StepTimeSigma
	}
	kind, _ := latency.ParseKind(r.LatencyModel)
	return latency.DefaultSigmaOf(kind)
}

// IntervalScale is the step-time scale of one side of the 90% interval:
// 1 − z·σ (side −1, faster steps), 1 (side 0) or 1 + z·σ (side +1).
func IntervalScale(sigma float64, side int) float64 {
	return 1 + float64(side)*IntervalZ*sigma
}

// ScaleStepTimes returns a copy of r whose latency models (every
// instance's, a fleet pool's, and a pipeline stage's) take factor × their step times. r
// itself is left as it was.
func (r *Resolved) ScaleStepTimes(factor float64) (*Resolved, error) {
	if factor == 1 {
		return r, nil
	}
	if !(factor > 0) || math.IsInf(factor, 0) {
		return nil, invalid("step-time scale %g must be a positive number", factor)
	}
	out := *r
	var err error
	scale := func(ic *instance.Config) error {
		if ic.Latency, err = latency.NewScaled(ic.Latency, factor); err != nil {
			return err
		}
		if ic.StageLatency != nil {
			ic.StageLatency, err = latency.NewScaled(ic.StageLatency, factor)
		}
		return err
	}
	if err := scale(&out.Instance); err != nil {
		return nil, err
	}
	out.ClusterConfig.Instances = slices.Clone(r.ClusterConfig.Instances)
	for i := range out.ClusterConfig.Instances {
		if err := scale(&out.ClusterConfig.Instances[i]); err != nil {
			return nil, err
		}
	}
	if f := r.ClusterConfig.Fleet; f != nil {
		fc := *f
		fc.Pools = slices.Clone(f.Pools)
		for i := range fc.Pools {
			if fc.Pools[i].Instance != nil {
				ic := *fc.Pools[i].Instance
				if err := scale(&ic); err != nil {
					return nil, err
				}
				fc.Pools[i].Instance = &ic
			}
		}
		out.ClusterConfig.Fleet = &fc
	}
	return &out, nil
}
