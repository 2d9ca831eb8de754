package fidelity

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// Case is a run ready to be simulated: its deployment with the
// kernel-physics model, the kernel fit from its profile, and its topology.
type Case struct {
	Run      *Run
	Deploy   deploy.Config // latency_model kernel-physics, coefficients unset
	Model    *latency.ModelConfig
	Kernels  *KernelFit
	Topology Topology
	Warnings []string
	inject   []tracev2.Record // requests at their send times, in order
}

// NewCase derives the deployment of r, loads its kernel profile (below
// profileRoot, LLMServingSim's profiler/perf layout) and fits the kernel
// coefficients.
func NewCase(r *Run, a Assets, profileRoot string) (*Case, error) {
	cfg, warns, err := Deployment(r, a)
	if err != nil {
		return nil, err
	}
	cfg.LatencyModel = string(latency.KindKernelPhysics)
	cfg.AlphaCoeffs, cfg.BetaCoeffs = nil, nil
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", r.Name, err)
	}
	km, ok := dep.Instance.Latency.(*latency.KernelPhysics)
	if !ok || dep.ModelConfig == nil {
		return nil, fmt.Errorf("fidelity: run %s: the deployment did not resolve to a kernel-physics model", r.Name)
	}
	prof, err := LoadProfile(ProfileDir(profileRoot, r.Hardware, r.Meta.Model, r.Meta.TensorParallel))
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", r.Name, err)
	}
	kf, err := FitKernels(km, dep.ModelConfig, prof, max(r.Meta.DataParallel, 1))
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", r.Name, err)
	}
	c := newCase(r, cfg, dep.ModelConfig, kf, TopologyOf(r, dep.ModelConfig))
	c.Warnings = warns
	return c, nil
}

// newCase assembles a case from its parts; requests are injected at their
// send time (vLLM's queueing), in order.
func newCase(r *Run, cfg deploy.Config, mc *latency.ModelConfig, kf *KernelFit, t Topology) *Case {
	c := &Case{Run: r, Deploy: cfg, Model: mc, Kernels: kf, Topology: t}
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
// (meanStepUs sets Q; see [Coefficients]).
func (c *Case) Deployment(u Universal, meanStepUs float64) (deploy.Config, error) {
	alpha, beta, err := Coefficients(c.Kernels, u, c.Topology, meanStepUs)
	if err != nil {
		return deploy.Config{}, err
	}
	cfg := c.Deploy
	cfg.AlphaCoeffs, cfg.BetaCoeffs = alpha, beta
	return cfg, nil
}

// simulate replays the run under u; obs (may be nil) watches it. It returns
// the SimResults in completion order and their mean ITL (µs).
func (c *Case) simulate(ctx context.Context, u Universal, meanStepUs float64, obs *recorder) ([]tracev2.SimResult, float64, error) {
	cfg, err := c.Deployment(u, meanStepUs)
	if err != nil {
		return nil, 0, err
	}
	return c.run(ctx, cfg, obs)
}

// simulateConfig replays the run on any deployment.
func (c *Case) simulateConfig(ctx context.Context, cfg deploy.Config) ([]tracev2.SimResult, error) {
	sims, _, err := c.run(ctx, cfg, nil)
	return sims, err
}

func (c *Case) run(ctx context.Context, cfg deploy.Config, obs *recorder) ([]tracev2.SimResult, float64, error) {
	dep, err := deploy.Resolve(cfg)
	if err != nil {
		return nil, 0, fmt.Errorf("fidelity: run %s: %w", c.Run.Name, err)
	}
	rc := replay.Config{Deploy: dep, Seed: 42}
	if obs != nil {
		km, ok := dep.Instance.Latency.(*latency.KernelPhysics)
		if !ok {
			return nil, 0, fmt.Errorf("fidelity: run %s: not a kernel-physics model", c.Run.Name)
		}
		obs.reset(km, c.Topology)
		d := *dep
		d.Instance.Latency = obs
		dep = &d
		rc.Deploy, rc.Observer = dep, obs
	}
	sims := make([]tracev2.SimResult, 0, len(c.inject))
	var itl, n float64
	_, err = replay.Simulate(ctx, rc, &replay.SliceSource{Records: c.inject}, nil,
		func(_ *tracev2.Record, res *tracev2.SimResult) error {
			if res == nil {
				return nil
			}
			sims = append(sims, *res)
			if res.OutputTokens > 1 {
				itl += float64(res.E2EUs-res.TTFTUs) / float64(res.OutputTokens-1)
				n++
			}
			return nil
		})
	if err != nil {
		return nil, 0, fmt.Errorf("fidelity: run %s: %w", c.Run.Name, err)
	}
	if n > 0 {
		itl /= n
	}
	return sims, itl, nil
}
