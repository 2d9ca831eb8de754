package fit

import (
	"context"
	"math"
	"servesim/internal/deploy"
	"slices"
	"testing"

	"servesim/internal/des/latency"
	"servesim/internal/replay"
)

// physicsTruth is the physics model of the synthetic traces: every fitted
// share and cost set off its default.
func physicsTruth(t testing.TB) (alpha, beta []float64) {
	t.Helper()
	g, err := latency.ResolveGPU("H100", "")
	if err != nil {
		t.Fatal(err)
	}
	beta = latency.PhysicsDefaultBeta(g)
	beta[latency.PhFlopsEff], beta[latency.PhBwEff] = 0.66, 0.78
	return latency.PhysicsDefaultAlpha(), beta
}

// physicsTraces are three runs of one deployment under the truth: light
// (1 request/s), loaded (6/s) and saturated behind a client capped at 48
// requests in flight (40/s offered), with chunk times perturbed by ±0.5 %.
func physicsTraces(t testing.TB) []Trace {
	t.Helper()
	alpha, beta := physicsTruth(t)
	return physicsTracesOf(t, alpha, beta)
}

// physicsTracesOf are physicsTraces under the truth alpha, beta.
func physicsTracesOf(t testing.TB, alpha, beta []float64) []Trace {
	t.Helper()
	return physicsTracesOn(t, "", 1, alpha, beta)
}

// physicsTracesOn are physicsTraces on the GPU gpu ("" for the default)
// under the truth alpha, beta, their rates × scale.
func physicsTracesOn(t testing.TB, gpu string, scale float64, alpha, beta []float64) []Trace {
	t.Helper()
	dep := func(alpha, beta []float64) *deploy.Resolved {
		cfg := deploy.Default()
		cfg.LatencyModel, cfg.AlphaCoeffs, cfg.BetaCoeffs, cfg.MaxNumSeqs = "physics", alpha, beta, 64
		if gpu != "" {
			cfg.GPU = gpu
		}
		d, err := deploy.Resolve(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := synth{promptLo: 100, promptHi: 3000, outLo: 16, outHi: 160, kind: "physics", alpha: alpha, beta: beta, noise: 0.005, itl: true}
	runs := []struct {
		name string
		n    int
		rate float64
		cap  int
	}{{"light", 300, 1, 0}, {"loaded", 600, 6, 0}, {"saturated", 600, 40, 48}}
	var out []Trace
	for i, r := range runs {
		s := base
		s.n, s.ratePerS, s.seed = r.n, r.rate*scale, uint64(11+i)
		s.client = replay.Client{MaxConcurrency: r.cap}
		recs, itl := s.makeOn(t, dep(alpha, beta))
		start := dep(nil, nil) // fitted from the defaults
		out = append(out, Trace{Name: r.name, Deploy: start, Client: s.client,
			Replay: replay.TraceOptions{InjectAtArrival: s.client.Capped()}, Input: Input{Records: recs, ITL: itl}})
	}
	return out
}

// TestFitAllRecoversPhysics: fitted on a light, a loaded and a saturated
// trace together, from the defaults, the physics model's free coefficients
// (the GPU's shares of peak FLOP/s and bandwidth) come back within 3 % of
// the truth, the held Q and A_end stay at their start, and a second fit
// gives the same bytes. Replayed with the fit, each trace's E2E is within
// 1 %; TTFT is within 7 %: a replay a hair off the truth puts the loaded
// trace's requests in other steps than the truth did (the fit lands 0.1 %
// off the truth's FLOP/s share and the loaded trace's TTFT MAPE is then
// 6.0 %), the floor of what any fit can reach on a single replay of
// queued requests.
func TestFitAllRecoversPhysics(t *testing.T) {
	if testing.Short() {
		t.Skip("replays three traces a dozen times")
	}
	traces := physicsTraces(t)
	fit := func() *Result {
		res, err := FitAll(context.Background(), Config{Seed: 1, MaxIterations: 12}, traces)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := fit()
	_, truth := physicsTruth(t)
	for _, p := range res.PerTrace {
		t.Logf("%s: start TTFT %.3f E2E %.3f; fit TTFT %.3f E2E %.3f (%d requests)", p.Name,
			p.Start.TTFTMAPE, p.Start.E2EMAPE, p.Fit.TTFTMAPE, p.Fit.E2EMAPE, p.FitRequests)
	}
	t.Logf("beta %.4g; %d replays, converged %v, spread %.3f", res.Beta, res.Iterations, res.Converged, res.Spread)
	for _, i := range physicsFree() {
		if got, want := res.Beta[i], truth[i]; math.Abs(got-want) > 0.03*want {
			t.Errorf("%s = %.4g, want %.4g ± 3%%", latency.PhysicsBetaNames()[i], got, want)
		}
	}
	if !slices.Equal(res.Alpha, latency.PhysicsDefaultAlpha()) {
		t.Errorf("alpha %v, want the start %v held", res.Alpha, latency.PhysicsDefaultAlpha())
	}
	if len(res.PerTrace) != 3 || res.PerTrace[2].Start.E2EMAPE < 0.05 {
		t.Errorf("per trace %+v: the saturated trace should start well off", res.PerTrace)
	}
	for _, p := range res.PerTrace {
		if p.Fit.E2EMAPE > 0.01 || p.Fit.TTFTMAPE > 0.07 {
			t.Errorf("%s: fitted E2E MAPE %.4f, TTFT %.4f; want within the noise", p.Name, p.Fit.E2EMAPE, p.Fit.TTFTMAPE)
		}
	}
	again := fit()
	if !slices.Equal(again.Beta, res.Beta) || !slices.Equal(again.Alpha, res.Alpha) {
		t.Errorf("a second fit differs:\n%v\n%v", again.Beta, res.Beta)
	}
}

// TestFitFreesEagerCost: with several loads the fit frees the eager
// per-layer cost: a truth of 150 µs against the start's 80 comes back
// within 12% (165), and the shares within 3%. On an L40S every step that
// prefills pays that cost in full, so it shares its steps with the
// prefill costs held at their start, which blur it (on an H100 the steps
// that run without a graph hide their launches behind the GPU's work).
func TestFitFreesEagerCost(t *testing.T) {
	if testing.Short() {
		t.Skip("replays three traces a dozen times")
	}
	g, err := latency.ResolveGPU("L40S", "")
	if err != nil {
		t.Fatal(err)
	}
	alpha, beta := latency.PhysicsDefaultAlpha(), latency.PhysicsDefaultBeta(g)
	beta[latency.PhFlopsEff], beta[latency.PhBwEff], beta[latency.PhEagerLayerUs] = 0.66, 0.78, 150
	traces := physicsTracesOn(t, "L40S", 0.25, alpha, beta) // a quarter of an H100's speed
	res, err := FitAll(context.Background(), Config{Seed: 1, MaxIterations: 12}, traces)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Beta[latency.PhEagerLayerUs]; math.Abs(got-150) > 0.12*150 {
		t.Errorf("eager_layer_us = %.4g, want 150 ± 12%% (beta %.4g)", got, res.Beta)
	}
	for _, i := range physicsFree() {
		if got, want := res.Beta[i], beta[i]; math.Abs(got-want) > 0.03*want {
			t.Errorf("%s = %.4g, want %.4g ± 3%%", latency.PhysicsBetaNames()[i], got, want)
		}
	}
}

// TestFeaturesArePhysicsTime: the fit's linear form of a step (features ·
// θ + offset) is the physics model's own step time at the coefficients θ
// stands for, on every branch: Hopper and FlashAttention 2, graphs,
// --enforce-eager and V0, launch-bound and not, TP and DP of 1 and 2,
// the eager cost free or held.
func TestFeaturesArePhysicsTime(t *testing.T) {
	steps := func(dp int) []latency.Step {
		var out []latency.Step
		for _, d := range []int{0, 1, 8, 64, 600} {
			for _, prompt := range []int{0, 1, 2, 300, 2000} {
				s := latency.Step{DecodeCount: d, DecodeContextSum: int64(d * 1500)}
				for range min(prompt, 1) * dp {
					s.Prefill = append(s.Prefill, latency.PrefillWork{NewTokens: prompt, Context: 100, Target: 100 + prompt})
				}
				out = append(out, s)
			}
		}
		return out
	}
	checked, bound := 0, 0
	for _, gpu := range []string{"H100", "L40S"} {
		g, _ := latency.LookupGPU(gpu)
		for _, model := range []string{"llama-3.2-1b", "qwen3-14b"} {
			mc, _ := latency.LookupModel(model)
			for _, graphs := range []latency.CUDAGraphs{{}, {Eager: true}, {DecodeOnly: true}} {
				for _, par := range [][2]int{{1, 1}, {2, 1}, {1, 2}} {
					start := latency.PhysicsDefaultBeta(g)
					m, err := latency.NewPhysics(latency.PhysicsConfig{Model: mc, GPU: g, TP: par[0], DP: par[1], Graphs: graphs,
						Alpha: []float64{0, 0, 0}, Beta: start})
					if err != nil {
						t.Fatal(err)
					}
					for _, free := range []bool{false, true} {
						sp, err := newSpace(latency.KindPhysics, m, []float64{0, 0, 0}, start, free)
						if err != nil {
							t.Fatal(err)
						}
						theta := sp.theta()[:sp.nb]
						theta[phUFl], theta[phUBw] = 1/0.5, 1/0.6
						if free {
							theta[phNumFree] = 400
						}
						sp.at(theta)
						beta := physicsCoefficients(sp.beta, theta, sp.physicsFreeList())
						dst := make([]float64, sp.nb)
						for _, s := range steps(par[1]) {
							got := sp.features(&s, dst)
							for j := range dst {
								got += dst[j] * theta[j]
							}
							q := m.Quantities(&s)
							want := max(latency.PhysicsTime(&q, beta), 1)
							if q.LaunchLayers > 0 && latency.LaunchTime(&q, beta) > latency.GPUTime(&q, beta) {
								bound++
							}
							checked++
							if math.Abs(got-want) > 1e-6*want {
								t.Fatalf("%s %s %+v TP %d DP %d free %v, %d decodes and %v: features give %.3f µs, the model %.3f",
									gpu, model, graphs, par[0], par[1], free, s.DecodeCount, s.Prefill, got, want)
							}
						}
					}
				}
			}
		}
	}
	if bound == 0 || bound == checked {
		t.Errorf("%d of %d steps launch-bound: the test needs both branches", bound, checked)
	}
}
