package fidelity

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/des/metrics"
	"servesim/internal/fit"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// Case is a run ready to be simulated: its deployment with the physics
// model and the GPU fit from its kernel profile. Its
// replays count each request's TTFT and E2E from where vLLM would have
// stamped it queued: the end of the simulated step in flight when it
// arrived (see the package documentation, Method 4).
type Case struct {
	Run      *Run
	Deploy   deploy.Config // latency_model physics, coefficients unset
	Model    *latency.ModelConfig
	Kernels  *fit.KernelFit
	Warnings []string
	inject   []tracev2.Record // requests at their send times, in order
}

// NewCase derives the deployment of r, loads its kernel profile (below
// profileRoot, LLMServingSim's profiler/perf layout) and fits the kernel
// coefficients.
func NewCase(r *Run, a Assets, profileRoot string) (*Case, error) {
	kp, cfg, warns, err := kernelProfile(r, a, profileRoot)
	if err != nil {
		return nil, err
	}
	kf, err := fit.Kernels(kp.Model, kp.Config, kp.Profile, kp.DP)
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", r.Name, err)
	}
	c := newCase(r, cfg, kp.Config, kf)
	c.Warnings = warns
	return c, nil
}

// KernelProfile is run r's kernel profile (below profileRoot) with the
// physics model of its deployment at the defaults.
func KernelProfile(r *Run, a Assets, profileRoot string) (fit.KernelProfile, error) {
	kp, _, _, err := kernelProfile(r, a, profileRoot)
	return kp, err
}

// kernelProfile is KernelProfile with the run's deployment and the
// warnings of deriving it.
func kernelProfile(r *Run, a Assets, profileRoot string) (fit.KernelProfile, deploy.Config, []string, error) {
	var kp fit.KernelProfile
	cfg, warns, err := Deployment(r, a)
	if err != nil {
		return kp, cfg, nil, err
	}
	cfg.LatencyModel = string(latency.KindPhysics)
	cfg.AlphaCoeffs, cfg.BetaCoeffs = nil, nil
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		return kp, cfg, nil, fmt.Errorf("fidelity: run %s: %w", r.Name, err)
	}
	km, ok := dep.Instance.Latency.(*latency.Physics)
	if !ok || dep.ModelConfig == nil {
		return kp, cfg, nil, fmt.Errorf("fidelity: run %s: the deployment did not resolve to a physics model", r.Name)
	}
	prof, err := LoadProfile(ProfileDir(profileRoot, r.Hardware, r.Meta.Model, r.Meta.TensorParallel))
	if err != nil {
		return kp, cfg, nil, fmt.Errorf("fidelity: run %s: %w", r.Name, err)
	}
	return fit.KernelProfile{Model: km, Config: dep.ModelConfig, Profile: prof, DP: max(r.Meta.DataParallel, 1)}, cfg, warns, nil
}

// newCase assembles a case from its parts; requests are injected at their
// send time (vLLM's queueing), in order.
func newCase(r *Run, cfg deploy.Config, mc *latency.ModelConfig, kf *fit.KernelFit) *Case {
	c := &Case{Run: r, Deploy: cfg, Model: mc, Kernels: kf}
	c.inject = slices.Clone(r.Records)
	for i := range c.inject {
		if c.inject[i].SendTimeUs > 0 {
			c.inject[i].ArrivalTimeUs = c.inject[i].SendTimeUs
		}
	}
	slices.SortStableFunc(c.inject, func(a, b tracev2.Record) int { return cmp.Compare(a.ArrivalTimeUs, b.ArrivalTimeUs) })
	return c
}

// Deployment returns the case's deployment with the coefficients of u
// (see [Coefficients]).
func (c *Case) Deployment(u Universal) (deploy.Config, error) {
	alpha, beta, err := Coefficients(c.Kernels, u)
	if err != nil {
		return deploy.Config{}, err
	}
	cfg := c.Deploy
	cfg.AlphaCoeffs, cfg.BetaCoeffs = alpha, beta
	return cfg, nil
}

// replayed is one replay of a case.
type replayed struct {
	// sims are the completed requests in completion order, with TTFT, E2E
	// and the scheduling delay counted from where vLLM would have stamped
	// the request queued: the end of the simulated step in flight when it
	// arrived ([recorder.queuedAt]). The simulator's own figures count
	// from the arrival; rawE2EMean is their mean E2E, for checks that
	// replay a deployment file through the binaries' path.
	sims       []tracev2.SimResult
	rawE2EMean float64
	rec        *recorder
	summary    metrics.Summary
}

// simulate replays the run under u.
func (c *Case) simulate(ctx context.Context, u Universal) (*replayed, error) {
	cfg, err := c.Deployment(u)
	if err != nil {
		return nil, err
	}
	return c.replay(ctx, cfg, u)
}

// replay replays the run on any physics deployment of it; u only splits
// the logged step times between the universal terms and the rest (for the
// fit).
func (c *Case) replay(ctx context.Context, cfg deploy.Config, u Universal) (*replayed, error) {
	return c.replayAt(ctx, cfg, u, 1)
}

// replayAt is replay with every step time × scale, as one end of an
// interval runs (deploy.IntervalScale); queueing and token overheads stay
// as they are.
func (c *Case) replayAt(ctx context.Context, cfg deploy.Config, u Universal, scale float64) (*replayed, error) {
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", c.Run.Name, err)
	}
	km, ok := dep.Instance.Latency.(*latency.Physics)
	if !ok || dep.IsCluster() {
		return nil, fmt.Errorf("fidelity: run %s: the deployment is not one physics instance", c.Run.Name)
	}
	rec := newRecorder(u)
	if err := rec.reset(km, scale); err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", c.Run.Name, err)
	}
	d := *dep
	d.Instance.Latency = rec
	out := &replayed{rec: rec, sims: make([]tracev2.SimResult, 0, len(c.inject))}
	o, err := replay.Simulate(ctx, replay.Config{Deploy: &d, Seed: 42, Observer: rec}, &replay.SliceSource{Records: c.inject}, nil,
		func(_ *tracev2.Record, res *tracev2.SimResult) error {
			if res != nil {
				out.sims = append(out.sims, *res)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", c.Run.Name, err)
	}
	out.summary = o.Summary
	for i := range out.sims {
		s := &out.sims[i]
		out.rawE2EMean += s.E2EUs
		shift := float64(s.ArrivalUs - rec.queuedAt(s.ArrivalUs)) // ≤ 0
		s.TTFTUs += shift
		s.E2EUs += shift
		s.SchedulingDelayUs += shift
		// Counted from the step in flight's end, as vLLM's queued_ts is,
		// neither clock holds the arrival's phase in that step: no interval
		// spans it.
		s.WaitInFlightUs, s.StepInFlightUs = 0, 0
	}
	if n := len(out.sims); n > 0 {
		out.rawE2EMean /= float64(n)
	}
	return out, nil
}
