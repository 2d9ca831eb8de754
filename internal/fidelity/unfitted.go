package fidelity

import (
	"context"
	"fmt"

	"servesim/internal/deploy"
	"servesim/internal/report"
)

// Assessment is one more replay of a run, graded like the held-out one.
type Assessment struct {
	Metrics map[string]Metrics      // ttft, tpot, e2e
	Regimes map[Regime]RegimeErrors // by the load each request met on the real server
	// ByLoad are the errors by the load each request met in the replay
	// (simRegimes), as calibrate fit pools them for its σ.
	ByLoad   map[Regime]RegimeErrors
	Interval *Interval // at the σ the other runs' unfitted errors give (UnfittedSigma)
	replay   *replayed // the replay graded, kept for its interval
}

// unfittedDeploy is the run's deployment with its GPU's physics defaults:
// latency.PhysicsDefaultBeta and PhysicsDefaultAlpha, no kernel profile.
func (c *Case) unfittedDeploy() deploy.Config {
	cfg := c.Deploy
	cfg.AlphaCoeffs, cfg.BetaCoeffs = nil, nil
	return cfg
}

// unfitted replays the run with its deployment's physics defaults and no
// universal fit (what a planner gets for a GPU and model nobody
// measured), on the same clock as the fitted replay, and grades it. Its
// interval waits for the other runs' unfitted errors (unfittedInterval).
func (c *Case) unfitted(ctx context.Context) (*Assessment, error) {
	u := DefaultUniversal() // splits the logged steps only: the defaults are the deployment's
	rp, err := c.replay(ctx, c.unfittedDeploy(), u)
	if err != nil {
		return nil, err
	}
	rep, err := report.Build(report.Input{Header: report.HeaderFrom(c.Run.Header), Trace: c.Run.Records, Sim: rp.sims}, report.DefaultConfig())
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s (unfitted): %w", c.Run.Name, err)
	}
	return &Assessment{Metrics: metricsFrom(rep), Regimes: regimeErrors(c.Run, rp.sims),
		ByLoad: errorsByClass(c.Run, rp.sims, simRegimes(c.Run, rp.rec.results)), replay: rp}, nil
}

// unfittedInterval grades a's replay with its 90% interval at sigma.
func (c *Case) unfittedInterval(ctx context.Context, a *Assessment, sigma float64) error {
	iv, err := c.interval(ctx, c.unfittedDeploy(), DefaultUniversal(), a.replay, sigma)
	if err != nil {
		return err
	}
	a.Interval, a.replay = iv, nil
	return nil
}

// UnfittedSigma is the σ the unfitted replays of runs other than except
// give by calibrate fit's rule (fit.StepTimeSigma: √(π/2) × the larger of
// the TTFT and E2E MAPE over all their requests and over those of each
// load their replays met with 30 or more, the largest), the evidence
// behind latency.DefaultStepTimeSigma; with no such run, that default.
func UnfittedSigma(runs []RunReport, except string) float64 {
	var all RegimeErrors
	var loads []map[Regime]RegimeErrors
	for _, run := range runs {
		if run.Name != except && run.Unfitted != nil {
			all = poolMAPE(all, run.Unfitted.Metrics)
			loads = append(loads, run.Unfitted.ByLoad)
		}
	}
	return ruleSigma(all, pooledRegimes(loads))
}

// GPUErrors pool the runs of one GPU, every request weighing the same.
type GPUErrors struct {
	GPU              string
	Runs             int
	Fitted, Unfitted RegimeErrors
}

// byGPU pools the runs' TTFT and E2E MAPE by GPU, for the fitted and the
// unfitted replays, GPUs in the order of their first run.
func byGPU(runs []RunReport) []GPUErrors {
	var out []GPUErrors
	for _, run := range runs {
		i := 0
		for i < len(out) && out[i].GPU != run.GPU {
			i++
		}
		if i == len(out) {
			out = append(out, GPUErrors{GPU: run.GPU})
		}
		g := &out[i]
		g.Runs++
		g.Fitted = poolMAPE(g.Fitted, run.Metrics)
		if run.Unfitted != nil {
			g.Unfitted = poolMAPE(g.Unfitted, run.Unfitted.Metrics)
		}
	}
	return out
}

// poolMAPE adds a run's TTFT and E2E MAPE to p, weighted by its requests
// (report.Build pairs TTFT and E2E of the same requests, so their counts
// are one).
func poolMAPE(p RegimeErrors, m map[string]Metrics) RegimeErrors {
	t, e := m[report.MetricTTFT], m[report.MetricE2E]
	if e.N == 0 {
		return p
	}
	n := float64(p.N + e.N)
	p.TTFTMAPE = (p.TTFTMAPE*float64(p.N) + t.MAPE*float64(e.N)) / n
	p.E2EMAPE = (p.E2EMAPE*float64(p.N) + e.MAPE*float64(e.N)) / n
	p.N += e.N
	return p
}
