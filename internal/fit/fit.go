package fit

import (
	"context"
	"errors"
	"fmt"
	"math"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// Config says what to fit and how to replay.
type Config struct {
	// Deploy is the deployment the trace ran on. Its latency model
	// (blackbox or trained-physics) is the one fitted, starting from its
	// coefficients (Start overrides them).
	Deploy *deploy.Resolved
	// StartAlpha and StartBeta, if both set, are the starting coefficients
	// (else the deployment's, else the model's reference ones).
	StartAlpha, StartBeta []float64

	Seed          int64  // token synthesis of the replay, and the holdout draw
	ContextGrowth string // the trace header's session_context_growth
	// Replay says how rows become requests, as `replay` is told; the zero
	// value is replay's default. With ClosedLoop, the errors (Start, Fit,
	// Holdout, Iteration) are those of the closed-loop replay that grades
	// the fit — later session rounds arrive at the simulated completion of
	// the round before plus the think time — while in the replays that give
	// the equations a later round also waits for its measured send time
	// (see doc.go, "Closed loops").
	Replay replay.TraceOptions

	RTTUs          int64   // round trip taken off the measured TTFT (calibrate adds it to the sim)
	WarmupRequests int64   // request ids below this are replayed but not fitted
	Holdout        float64 // share of requests left out of the fit, in [0, 1)

	MaxIterations int     // fixed-point iterations (one replay each; one more checks the result); 0 = 10
	Tolerance     float64 // stop when no coefficient moves by more than this share; 0 = 0.001
	Ridge         float64 // pull towards the start, relative to each column; 0 = per model (1e-9 blackbox, 1e-2 trained-physics)
	// FitTokenOverhead fits A_tok (alpha[2]) too. By default it keeps its
	// starting value: A_tok is added to every token but never delays the
	// server, so the measured times cannot tell it from the per-step
	// constant except through queueing, which least squares on a replay's
	// batches does not see (see doc.go).
	FitTokenOverhead bool
	// HoldAlpha keeps the marked alpha coefficients at their starting
	// values. Blackbox's α₁ (pre-queue time per prompt token) and β₁
	// (step time per prefill token) add up alike in every TTFT and differ
	// only in whether the time delays other requests; where the server's
	// per-token work outside the step is known to be nil, holding α₁ at 0
	// keeps noise from moving prefill cost off the step.
	HoldAlpha [3]bool

	// Iteration, if set, is told the error of each iteration's
	// coefficients (iteration 0 is the start) and the coefficients.
	Iteration func(iter int, fit, holdout Errors, alpha, beta []float64)

	anchored bool // closed-loop replays hold later rounds until their measured send times (anchoredFollowUps)
}

// Input is the measured trace: records on one time origin (tracev2.ReadAll)
// and, optionally, its ITL rows on the same origin.
type Input struct {
	Records []tracev2.Record
	ITL     []tracev2.ITLRow
}

// Errors is how far a replay is from the measurement over one set of
// requests: MAPE of TTFT and E2E as calibrate computes them.
type Errors struct {
	N        int     // requests compared
	Missing  int     // measured requests the replay did not complete
	TTFTMAPE float64 // fraction
	E2EMAPE  float64 // fraction
	nT, nE   int
}

// Objective is the fit's figure of merit: the mean of the two MAPEs.
func (e Errors) Objective() float64 { return (e.TTFTMAPE + e.E2EMAPE) / 2 }

// Result is a fit.
type Result struct {
	Kind        latency.Kind
	Alpha, Beta []float64

	Start           Errors   // the starting coefficients' replay, fit set
	Fit, Holdout    Errors   // the chosen coefficients' replay; Holdout.N = 0 without a holdout
	Iterations      int      // replays run, the first included
	Chosen          int      // the coefficients kept: -1 the iterates' mean, 0 the start, k > 0 the k-th iterate (the one that graded best)
	Converged       bool     // the coefficients stopped moving (by Tolerance) before MaxIterations
	Spread          float64  // largest relative standard deviation of a beta over the averaged iterates
	FitRequests     int      // requests whose equations were used
	HoldoutRequests int      // requests replayed but left out of the equations
	ITLRequests     int      // requests fitted by 32-token segments from the ITL data
	Equations       int      // equations of the last solve
	Residual        float64  // RMS relative error of the equations at the last solve
	Warnings        []string // for stderr: the caller decides where they go
	StartAlpha      []float64
	StartBeta       []float64 // all 11 for trained-physics
}

// Fit fits the deployment's latency model to the measured trace.
func Fit(ctx context.Context, cfg Config, in Input) (*Result, error) {
	if cfg.Deploy == nil {
		return nil, errors.New("fit: no deployment")
	}
	if cfg.Holdout < 0 || cfg.Holdout >= 1 || math.IsNaN(cfg.Holdout) {
		return nil, fmt.Errorf("fit: holdout share %v is not in [0, 1)", cfg.Holdout)
	}
	if cfg.Deploy.IsCluster() {
		return nil, errors.New("fit: the deployment is a cluster (several instances, admission or routing policies or latencies, or prefill/decode pools); fit models one instance")
	}
	if cfg.Deploy.KVCPUBlocks > 0 {
		return nil, errors.New("fit: the CPU KV tier's reload time is not a latency-model term; fit without kv_cpu_blocks")
	}
	kind, err := latency.ParseKind(cfg.Deploy.LatencyModel)
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	alpha, beta, err := startCoefficients(cfg, kind)
	if err != nil {
		return nil, err
	}
	m0, err := model(cfg.Deploy, kind, alpha, beta)
	if err != nil {
		return nil, err
	}
	sp, err := newSpace(kind, m0, alpha, beta)
	if err != nil {
		return nil, err
	}
	nFit, nHold, ts := targets(in.Records, &cfg)
	if nFit == 0 {
		return nil, errors.New("fit: no request to fit: none is ok, past the warm-up, with consistent chunk times and outside the holdout")
	}
	res := &Result{Kind: kind, FitRequests: nFit, HoldoutRequests: nHold, StartAlpha: alpha, StartBeta: sp.beta}
	res.ITLRequests = attachITL(ts, in.Records, in.ITL)
	maxIter, tol, ridge := cfg.MaxIterations, cfg.Tolerance, cfg.Ridge
	if maxIter <= 0 {
		maxIter = 10
	}
	if tol <= 0 {
		tol = 0.001
	}
	if ridge <= 0 {
		ridge = 1e-9
		if kind == latency.KindTrainedPhysics {
			ridge = 1e-2
		}
	}

	// The equations come from replays anchored to the measured send times,
	// the errors from the replay that grades (see Config.Replay and
	// anchoredFollowUps).
	eq, closed := cfg, cfg.Replay.ClosedLoop
	eq.anchored = closed

	theta := sp.theta()
	prior := sp.theta()
	fixed := make([]bool, len(theta))
	if !cfg.FitTokenOverhead {
		fixed[sp.nb+2] = true
	}
	for i, h := range cfg.HoldAlpha {
		if h {
			fixed[sp.nb+i] = true
		}
	}
	// Fixed-point iterations: replay, then solve on that replay's batches.
	// A replay with other coefficients puts its steps at other phases
	// against the arrivals, so the iterates do not settle exactly but
	// wander within the noise this leaves; their mean over the second half
	// is the estimate (Polyak averaging), checked by a last replay. On
	// measured data the wandering can be wide (terms the data barely tell
	// apart) and the mean replay worse than the start; then the replayed
	// iterate that graded best is kept, or the start if none beat it.
	type candidate struct {
		theta   []float64
		fit, ho Errors
		index   int
	}
	var cands []candidate
	var hist [][]float64
	for iter := 0; iter < maxIter; iter++ {
		rec, fe, he, err := replayErrors(ctx, &eq, in.Records, sp, kind, ts, theta)
		if err != nil {
			return nil, err
		}
		if closed {
			if _, fe, he, err = replayErrors(ctx, &cfg, in.Records, sp, kind, ts, theta); err != nil {
				return nil, err
			}
		}
		if cfg.Iteration != nil {
			a, b := sp.coefficients(theta)
			cfg.Iteration(iter, fe, he, a, b)
		}
		if iter == 0 {
			res.Start = fe
		}
		cands = append(cands, candidate{theta, fe, he, iter})
		next, neq, resid, err := solve(rec, sp, ts, theta, prior, fixed, ridge)
		if err != nil {
			return nil, err
		}
		if neq == 0 {
			return nil, errors.New("fit: no equation: the replay completed none of the measured requests")
		}
		res.Equations, res.Residual = neq, resid
		change := maxRelChange(theta, next)
		hist = append(hist, next)
		theta = next
		if change < tol {
			res.Converged = true
			break
		}
	}
	window := hist[len(hist)/2:]
	res.Spread = spread(window, sp.nb)
	theta = mean(window)
	_, fe, he, err := replayErrors(ctx, &cfg, in.Records, sp, kind, ts, theta)
	if err != nil {
		return nil, err
	}
	res.Iterations = len(hist) + 1
	if cfg.Iteration != nil {
		a, b := sp.coefficients(theta)
		cfg.Iteration(len(hist), fe, he, a, b)
	}
	best := candidate{theta, fe, he, -1}
	if fe.Objective() > res.Start.Objective() {
		// The mean, the estimate that least depends on one replay's
		// phases, is kept unless it replays worse than the start; then
		// the iterate that replays best (the start if none beats it).
		best = cands[0]
		for _, c := range cands[1:] {
			if c.fit.Objective() < best.fit.Objective() {
				best = c
			}
		}
	}
	res.Alpha, res.Beta = sp.coefficients(best.theta)
	res.Fit, res.Holdout, res.Chosen = best.fit, best.ho, best.index
	if best.index == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("no fitted coefficients replay better than the starting ones (the iterates' mean: error %.3g against %.3g); keeping the start",
			fe.Objective(), res.Start.Objective()))
	} else if best.index > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the iterates' mean replays worse than the start (error %.3g against %.3g); keeping iterate %d (error %.3g)",
			fe.Objective(), res.Start.Objective(), best.index, best.fit.Objective()))
	}
	if res.Fit.Missing > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the replay did not complete %d measured requests (dropped or cut); they are left out of the error", res.Fit.Missing))
	}
	if !res.Converged && res.Spread > 0.05 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the coefficients still moved by up to %.0f%% between the last replays; their mean is kept", 100*res.Spread))
	}
	return res, nil
}

// startCoefficients are Start, else the deployment's, else (blackbox
// without a built-in entry) a guess from the trace.
func startCoefficients(cfg Config, kind latency.Kind) (alpha, beta []float64, err error) {
	switch {
	case cfg.StartAlpha != nil && cfg.StartBeta != nil:
		return cfg.StartAlpha, cfg.StartBeta, nil
	case cfg.Deploy.AlphaCoeffs != nil && cfg.Deploy.BetaCoeffs != nil:
		return cfg.Deploy.AlphaCoeffs, cfg.Deploy.BetaCoeffs, nil
	case kind == latency.KindTrainedPhysics:
		return latency.DefaultPhysicsAlpha(), latency.DefaultPhysicsBeta(), nil
	case kind == latency.KindBlackbox:
		tp := cfg.Deploy.TP
		if tp == 0 {
			tp = 1
		}
		if a, b, err := latency.BlackboxCoefficients(cfg.Deploy.Model, cfg.Deploy.GPU, tp); err == nil {
			return a, b, nil
		}
		// Any positive start converges; 10 ms per step, 20 µs per
		// prefill token, 100 µs per decode request.
		return []float64{0, 0, 0}, []float64{10000, 20, 100}, nil
	}
	return nil, nil, fmt.Errorf("fit: latency model %q has no coefficients to fit (want blackbox or trained-physics)", kind)
}

// model builds the latency model of the deployment with coefficients a, b.
func model(d *deploy.Resolved, kind latency.Kind, a, b []float64) (latency.Model, error) {
	m, err := latency.New(latency.Config{Kind: kind, Model: d.Model, GPU: d.GPU, HardwareFile: d.HardwareFile, TP: d.TP, Alpha: a, Beta: b})
	if err != nil {
		return nil, fmt.Errorf("fit: %w", err)
	}
	return m, nil
}

// simulate replays the trace with coefficients a, b and records it.
func simulate(ctx context.Context, cfg *Config, recs []tracev2.Record, sp *space, kind latency.Kind, a, b []float64) (*recorder, error) {
	m, err := model(cfg.Deploy, kind, a, b)
	if err != nil {
		return nil, err
	}
	rec := newRecorder(m, sp, len(recs))
	dep := *cfg.Deploy
	dep.Instance.Latency = rec
	dep.Instance.FastForward = false
	if err := replayTrace(ctx, cfg, recs, &dep, rec); err != nil {
		return nil, err
	}
	if len(rec.start) == 0 && len(rec.results) > 0 {
		return nil, errors.New("fit: the replay ran no step through the recorded latency model")
	}
	return rec, nil
}

// maxRelChange is the largest |new − old| / max(|old|, |new|) over θ
// (parameters that are both ~0 have not moved).
func maxRelChange(old, new []float64) float64 {
	m := 0.0
	for i := range old {
		d := math.Max(math.Abs(old[i]), math.Abs(new[i]))
		if d < 1e-9 {
			continue
		}
		m = math.Max(m, math.Abs(new[i]-old[i])/d)
	}
	return m
}

// replayErrors replays with θ and measures its errors on both sets.
func replayErrors(ctx context.Context, cfg *Config, recs []tracev2.Record, sp *space, kind latency.Kind, ts []target, theta []float64) (*recorder, Errors, Errors, error) {
	a, b := sp.coefficients(theta)
	rec, err := simulate(ctx, cfg, recs, sp, kind, a, b)
	if err != nil {
		return nil, Errors{}, Errors{}, err
	}
	return rec, errorsOf(ts, rec.results, cfg.RTTUs, false), errorsOf(ts, rec.results, cfg.RTTUs, true), nil
}

// mean averages vectors of equal length.
func mean(vs [][]float64) []float64 {
	m := make([]float64, len(vs[0]))
	for _, v := range vs {
		for i, x := range v {
			m[i] += x / float64(len(vs))
		}
	}
	return m
}

// spread is the largest standard deviation of one of the first n components
// (the betas) relative to its mean; components with a zero mean are left
// out.
func spread(vs [][]float64, n int) float64 {
	m := mean(vs)
	worst := 0.0
	for i := range m[:n] {
		if m[i] <= 1e-12 {
			continue
		}
		v := 0.0
		for _, x := range vs {
			v += (x[i] - m[i]) * (x[i] - m[i])
		}
		worst = math.Max(worst, math.Sqrt(v/float64(len(vs)))/m[i])
	}
	return worst
}
