package fit

import (
	"math"
	"testing"

	"servesim/internal/des/latency"
)

// TestFitStepsRecovers: steps timed by a physics model whose shares and
// eager cost are off the defaults give those back, from the defaults (on
// an L40S, where a step that prefills pays its per-layer cost in full).
func TestFitStepsRecovers(t *testing.T) {
	mc, err := latency.LookupModel("qwen3-14b")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := latency.LookupGPU("L40S")
	truth := latency.PhysicsDefaultBeta(g)
	truth[latency.PhFlopsEff], truth[latency.PhBwEff], truth[latency.PhEagerLayerUs] = 0.66, 0.78, 150
	real, err := latency.NewPhysics(latency.PhysicsConfig{Model: mc, GPU: g, TP: 1, Alpha: []float64{0, 0, 0}, Beta: truth})
	if err != nil {
		t.Fatal(err)
	}
	start := latency.PhysicsDefaultBeta(g)
	m, err := latency.NewPhysics(latency.PhysicsConfig{Model: mc, GPU: g, TP: 1, Alpha: []float64{0, 0, 0}, Beta: start})
	if err != nil {
		t.Fatal(err)
	}
	var steps []latency.Step
	var us []float64
	for _, d := range []int{1, 8, 32, 64, 128, 256} {
		for _, prompt := range []int{0, 300, 990, 4000} {
			s := latency.Step{DecodeCount: d, DecodeContextSum: int64(d * 1000)}
			if prompt > 0 {
				s.Prefill = []latency.PrefillWork{{NewTokens: prompt, Target: prompt}}
			}
			steps = append(steps, s)
			us = append(us, float64(real.StepTime(&s)))
		}
	}
	res := fitStepsRecovers(t, m, start, truth, steps, us)
	if res.Steps != len(steps) || res.Before < 0.05 || res.After > 0.005 {
		t.Errorf("%d steps, RMS before %.4f after %.4f; want all steps, well off before, within 0.5%% after", res.Steps, res.Before, res.After)
	}
	if _, err := FitSteps(m, start, steps[:2], us[:2]); err == nil {
		t.Error("two steps fitted three unknowns")
	}
}

// TestFitStepsLaunchBound: under --enforce-eager a small model's small
// steps are bound by the host's launches and its long ones by the GPU;
// the fit reads the launch cost from the first and the shares from the
// second, each branch taken at the coefficients of the pass.
func TestFitStepsLaunchBound(t *testing.T) {
	mc, err := latency.LookupModel("llama-3.2-1b")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := latency.LookupGPU("H100")
	eager := latency.CUDAGraphs{Eager: true}
	truth := latency.PhysicsDefaultBeta(g)
	truth[latency.PhFlopsEff], truth[latency.PhBwEff], truth[latency.PhEagerLayerUs] = 0.66, 0.78, 150
	real, err := latency.NewPhysics(latency.PhysicsConfig{Model: mc, GPU: g, TP: 1, Graphs: eager, Alpha: []float64{0, 0, 0}, Beta: truth})
	if err != nil {
		t.Fatal(err)
	}
	start := latency.PhysicsDefaultBeta(g)
	m, err := latency.NewPhysics(latency.PhysicsConfig{Model: mc, GPU: g, TP: 1, Graphs: eager, Alpha: []float64{0, 0, 0}, Beta: start})
	if err != nil {
		t.Fatal(err)
	}
	var steps []latency.Step
	var us []float64
	bound := 0
	for _, d := range []int{1, 8, 64, 256, 512} {
		for _, prompt := range []int{0, 2000, 4000, 8000} {
			s := latency.Step{DecodeCount: d, DecodeContextSum: int64(d * 2000)}
			if prompt > 0 {
				s.Prefill = []latency.PrefillWork{{NewTokens: prompt, Target: prompt}}
			}
			q := real.Quantities(&s)
			if real.LaunchBound(&q) {
				bound++
			}
			steps = append(steps, s)
			us = append(us, float64(real.StepTime(&s)))
		}
	}
	if bound == 0 || bound == len(steps) {
		t.Fatalf("%d of %d steps launch-bound: the test needs both kinds", bound, len(steps))
	}
	res := fitStepsRecovers(t, m, start, truth, steps, us)
	if res.After > 0.005 {
		t.Errorf("RMS after %.4f, want within 0.5%%", res.After)
	}
}

// fitStepsRecovers fits m from start to the steps and checks that the
// shares and the eager per-layer cost come back within 2% of truth.
func fitStepsRecovers(t *testing.T, m *latency.Physics, start, truth []float64, steps []latency.Step, us []float64) *StepsFit {
	t.Helper()
	res, err := FitSteps(m, start, steps, us)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{latency.PhFlopsEff, latency.PhBwEff, latency.PhEagerLayerUs} {
		if got, want := res.Beta[i], truth[i]; math.Abs(got-want) > 0.02*want {
			t.Errorf("%s = %.4g, want %.4g ± 2%%", latency.PhysicsBetaNames()[i], got, want)
		}
	}
	return res
}
