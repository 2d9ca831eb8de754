package fidelity

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"servesim/internal/deploy"
	"servesim/internal/fit"
	"servesim/internal/report"
)

// Config says where the measured runs and their kernel profiles are.
type Config struct {
	// BenchRoot is searched for runs (directories holding requests.jsonl
	// and meta.json), e.g. ../shared/data/llmservingsim/bench/examples.
	BenchRoot string
	// ProfileRoot holds the kernel profiles in LLMServingSim's
	// profiler/perf layout.
	ProfileRoot string
	Assets      Assets
	Fit         FitOptions
	// Runs, if set, limits the evaluation to these run names (as FindRuns
	// and RunName give them); every run still trains the others' fits.
	Runs []string
}

// Metrics are one latency metric's figures for one run (µs for means;
// errors as signed fractions of the real value, sim − real).
type Metrics struct {
	N        int
	RealMean float64
	SimMean  float64
	MeanErr  float64
	P50Err   float64
	P90Err   float64
	P99Err   float64
	MAPE     float64
	PearsonR float64
}

// RunReport is the held-out evaluation of one run.
type RunReport struct {
	Name      string
	Model     string
	GPU       string
	TP, DP    int
	Universal Universal  // fitted on the other runs
	Fit       *FitResult // that fit
	Kernels   map[string]fit.GroupError
	Alpha     []float64 // the coefficients the replay used
	Beta      []float64
	// Deploy is the deployment the replay used, coefficients included:
	// `replay --deployment` with it reproduces the replay, whose mean E2E
	// (counted from each request's injection, as replay counts it) is
	// ReplayE2EMeanUs; the report counts from the step in flight at
	// queueing (see [Case]).
	Deploy          deploy.Config
	ReplayE2EMeanUs float64
	Metrics         map[string]Metrics // ttft, tpot, e2e
	// Regimes are the errors of the requests that met each load on the
	// real server (see Regime).
	Regimes map[Regime]RegimeErrors
	// Interval is the replay's 90% interval at the σ of its fit
	// (FitResult.StepTimeSigma).
	Interval *Interval
	// Unfitted is the run replayed with the physics defaults of its GPU
	// (no kernel profile, no universal fit); nil when not evaluated.
	Unfitted *Assessment
	Sources  Sources
	Warnings []string
}

// Report is the fidelity of the simulator on every run, each predicted from
// a fit on the others.
type Report struct {
	Runs    []RunReport
	Overall map[string]Metrics      // mean over runs of each figure (N summed)
	Regimes map[Regime]RegimeErrors // every run's requests pooled by the load they met
	// UnfittedOverall and UnfittedRegimes pool the runs' replays with
	// the physics defaults (RunReport.Unfitted) as Overall and Regimes
	// pool the fitted ones.
	UnfittedOverall map[string]Metrics
	UnfittedRegimes map[Regime]RegimeErrors
	// ByGPU pools the runs of each GPU, fitted and unfitted.
	ByGPU []GPUErrors
	// Coverage and UnfittedCoverage pool the runs' 90% intervals.
	Coverage, UnfittedCoverage *PooledCoverage
	cases                      map[string]*Case // by run name, for replays of a report's deployments
}

// MetricNames are the metrics a report carries, in table order.
func MetricNames() []string { return []string{report.MetricTTFT, "tpot", report.MetricE2E} }

// Evaluate runs the leave-one-out evaluation: for every run, the universal
// coefficients are fitted on all the other runs (never on the run itself),
// the run is replayed with its own deployment, kernel fit and those
// coefficients, and calibrate's statistics compare it with the measurement.
func Evaluate(ctx context.Context, cfg Config) (*Report, error) {
	dirs, err := FindRuns(cfg.BenchRoot)
	if err != nil {
		return nil, err
	}
	if len(dirs) < 2 {
		return nil, fmt.Errorf("fidelity: %d runs under %s; a held-out evaluation needs at least 2", len(dirs), cfg.BenchRoot)
	}
	var cases []*Case
	for _, d := range dirs {
		r, err := LoadRun(RunName(cfg.BenchRoot, d), d)
		if err != nil {
			return nil, err
		}
		c, err := NewCase(r, cfg.Assets, cfg.ProfileRoot)
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	out := &Report{cases: map[string]*Case{}}
	for i, held := range cases {
		if len(cfg.Runs) > 0 && !slices.Contains(cfg.Runs, held.Run.Name) {
			continue
		}
		train := append(slices.Clone(cases[:i]), cases[i+1:]...)
		fit, err := FitUniversal(ctx, train, cfg.Fit)
		if err != nil {
			return nil, fmt.Errorf("fidelity: held out %s: %w", held.Run.Name, err)
		}
		rr, err := evaluateRun(ctx, held, fit)
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, *rr)
		out.cases[held.Run.Name] = held
	}
	if len(out.Runs) == 0 {
		return nil, errors.New("fidelity: no run selected")
	}
	if err := unfittedIntervals(ctx, out, cases); err != nil {
		return nil, err
	}
	pool(out)
	return out, nil
}

// unfittedIntervals grades each evaluated run's unfitted replay with its
// interval, σ from every other run's unfitted errors (UnfittedSigma), as
// the fitted one takes its σ from the training runs: the runs left out of
// the evaluation are replayed unfitted for it too.
func unfittedIntervals(ctx context.Context, out *Report, cases []*Case) error {
	evaluated := map[string]*RunReport{}
	for i := range out.Runs {
		evaluated[out.Runs[i].Name] = &out.Runs[i]
	}
	all := make([]RunReport, 0, len(cases))
	for _, c := range cases {
		var a *Assessment
		if rr := evaluated[c.Run.Name]; rr != nil {
			a = rr.Unfitted
		} else {
			var err error
			if a, err = c.unfitted(ctx); err != nil {
				return err
			}
		}
		all = append(all, RunReport{Name: c.Run.Name, Unfitted: a})
	}
	for i := range out.Runs {
		rr := &out.Runs[i]
		if rr.Unfitted == nil {
			continue
		}
		if err := out.cases[rr.Name].unfittedInterval(ctx, rr.Unfitted, UnfittedSigma(all, rr.Name)); err != nil {
			return err
		}
	}
	return nil
}

// pool fills the report's figures over its runs.
func pool(r *Report) {
	var fitted, unfitted []map[string]Metrics
	var fittedReg, unfittedReg []map[Regime]RegimeErrors
	var fittedIv, unfittedIv []*Interval
	for _, run := range r.Runs {
		fitted, fittedReg, fittedIv = append(fitted, run.Metrics), append(fittedReg, run.Regimes), append(fittedIv, run.Interval)
		if u := run.Unfitted; u != nil {
			unfitted, unfittedReg, unfittedIv = append(unfitted, u.Metrics), append(unfittedReg, u.Regimes), append(unfittedIv, u.Interval)
		}
	}
	r.Overall, r.Regimes = overall(fitted), pooledRegimes(fittedReg)
	r.UnfittedOverall, r.UnfittedRegimes = overall(unfitted), pooledRegimes(unfittedReg)
	r.ByGPU = byGPU(r.Runs)
	r.Coverage, r.UnfittedCoverage = poolCoverage(fittedIv), poolCoverage(unfittedIv)
}

// evaluateRun replays a held-out run with universal coefficients fitted
// elsewhere and grades it.
func evaluateRun(ctx context.Context, c *Case, fit *FitResult) (*RunReport, error) {
	u := fit.Universal
	rp, err := c.simulate(ctx, u)
	if err != nil {
		return nil, err
	}
	rep, err := report.Build(report.Input{Header: report.HeaderFrom(c.Run.Header), Trace: c.Run.Records, Sim: rp.sims}, report.DefaultConfig())
	if err != nil {
		return nil, fmt.Errorf("fidelity: run %s: %w", c.Run.Name, err)
	}
	dcfg, err := c.Deployment(u)
	if err != nil {
		return nil, err
	}
	rr := &RunReport{Name: c.Run.Name, Model: c.Run.Meta.Model, GPU: c.Deploy.GPU, TP: c.Run.Meta.TensorParallel,
		DP: max(c.Run.Meta.DataParallel, 1), Universal: u, Fit: fit, Kernels: c.Kernels.Groups,
		Alpha: dcfg.AlphaCoeffs, Beta: dcfg.BetaCoeffs, Deploy: dcfg, Metrics: metricsFrom(rep), Warnings: c.Warnings,
		ReplayE2EMeanUs: rp.rawE2EMean}
	rr.Sources = sources(c, rp)
	rr.Regimes = regimeErrors(c.Run, rp.sims)
	if rr.Interval, err = c.interval(ctx, dcfg, u, rp, fit.StepTimeSigma()); err != nil {
		return nil, err
	}
	if rr.Unfitted, err = c.unfitted(ctx); err != nil {
		return nil, err
	}
	return rr, nil
}

// metricsFrom are the report's figures of every metric it has.
func metricsFrom(rep *report.Report) map[string]Metrics {
	out := map[string]Metrics{}
	for _, name := range MetricNames() {
		if cmp, ok := rep.Metrics[name]; ok {
			out[name] = metricsOf(cmp)
		}
	}
	return out
}

// metricsOf turns calibrate's comparison into signed relative figures.
func metricsOf(c *report.Comparison) Metrics {
	w := c.WorkloadLevel
	rel := func(e, real float64) float64 {
		if real == 0 {
			return 0
		}
		return e / real
	}
	return Metrics{N: c.Count, RealMean: w.RealMean, SimMean: w.SimMean, MeanErr: rel(w.MeanError, w.RealMean),
		P50Err: rel(w.P50Error, w.RealP50), P90Err: rel(w.P90Error, w.RealP90), P99Err: rel(w.P99Error, w.RealP99),
		MAPE: c.RequestLevel.MAPE, PearsonR: c.RequestLevel.PearsonR}
}

// overall averages each figure over the runs' metrics (every run weighs
// the same).
func overall(runs []map[string]Metrics) map[string]Metrics {
	out := map[string]Metrics{}
	for _, name := range MetricNames() {
		var m Metrics
		n := 0
		for _, r := range runs {
			x, ok := r[name]
			if !ok {
				continue
			}
			n++
			m.N += x.N
			m.RealMean += x.RealMean
			m.SimMean += x.SimMean
			m.MeanErr += x.MeanErr
			m.P50Err += x.P50Err
			m.P90Err += x.P90Err
			m.P99Err += x.P99Err
			m.MAPE += x.MAPE
			m.PearsonR += x.PearsonR
		}
		if n == 0 {
			continue
		}
		f := float64(n)
		m.RealMean, m.SimMean, m.MeanErr, m.P50Err, m.P90Err, m.P99Err, m.MAPE, m.PearsonR =
			m.RealMean/f, m.SimMean/f, m.MeanErr/f, m.P50Err/f, m.P90Err/f, m.P99Err/f, m.MAPE/f, m.PearsonR/f
		out[name] = m
	}
	return out
}
