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
	// Client is the load generator the trace records (a cap on requests in
	// flight); the replays model it as replay does.
	Client replay.Client

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
	// FitAlpha frees the marked alphas of the physics model, which holds
	// Q (α₀) and A_end (α₁) at their physical starting values by default:
	// fitted on a saturated trace, a free Q soaks up the server's queue.
	// Freed, they stay within [0, 0.1 s].
	FitAlpha [3]bool

	// Iteration, if set, is told the error of each iteration's
	// coefficients (iteration 0 is the start) and the coefficients.
	Iteration func(iter int, fit, holdout Errors, alpha, beta []float64)

	anchored bool // closed-loop replays hold later rounds until their measured send times (anchoredFollowUps)
}

// Trace is one measured trace of a fit over several (FitAll), with what is
// its own: the deployment it ran on and how it is replayed. The latency
// model's kind must be the same in every trace; its coefficients are
// shared.
type Trace struct {
	Name           string // for messages and per-trace errors
	Deploy         *deploy.Resolved
	Replay         replay.TraceOptions
	Client         replay.Client
	ContextGrowth  string
	RTTUs          int64
	WarmupRequests int64
	Input          Input
}

// TraceErrors are one trace's errors in a fit over several.
type TraceErrors struct {
	Name                string
	Start, StartHoldout Errors // the starting coefficients'
	Fit, Holdout        Errors // the chosen coefficients'
	FitRequests         int
	Holdouts            int
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
	// ByLoad are the same errors over the requests of each load regime,
	// as the replay met them (ClassifyLoad of the simulated arrivals,
	// schedules and ends); nil when no request was classed.
	ByLoad map[Regime]Errors
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
	// OnBound are the fitted coefficients that ended on a bound of their
	// physical range: a sign that the model, not the coefficient, is wrong.
	OnBound    []Bound
	StartAlpha []float64
	StartBeta  []float64 // all 11 for trained-physics
	// PerTrace are each trace's errors (one entry for Fit): the start's
	// and the chosen coefficients', on its fitted and held-out requests.
	PerTrace []TraceErrors
}

// merge pools two traces' errors (each MAPE weighted by its pairs).
func (e Errors) merge(o Errors) Errors {
	r := Errors{N: e.N + o.N, Missing: e.Missing + o.Missing, nT: e.nT + o.nT, nE: e.nE + o.nE}
	if r.nT > 0 {
		r.TTFTMAPE = (e.TTFTMAPE*float64(e.nT) + o.TTFTMAPE*float64(o.nT)) / float64(r.nT)
	}
	if r.nE > 0 {
		r.E2EMAPE = (e.E2EMAPE*float64(e.nE) + o.E2EMAPE*float64(o.nE)) / float64(r.nE)
	}
	for _, g := range Regimes() {
		a, b := e.ByLoad[g], o.ByLoad[g]
		if a.N+b.N+a.Missing+b.Missing == 0 {
			continue
		}
		if r.ByLoad == nil {
			r.ByLoad = map[Regime]Errors{}
		}
		a.ByLoad, b.ByLoad = nil, nil
		r.ByLoad[g] = a.merge(b)
	}
	return r
}

// Fit fits the deployment's latency model to the measured trace.
func Fit(ctx context.Context, cfg Config, in Input) (*Result, error) {
	return FitAll(ctx, cfg, []Trace{{Deploy: cfg.Deploy, Replay: cfg.Replay, Client: cfg.Client, ContextGrowth: cfg.ContextGrowth,
		RTTUs: cfg.RTTUs, WarmupRequests: cfg.WarmupRequests, Input: in}})
}

// job is one trace of a fit: its own configuration (cfg's shared settings
// with the trace's deployment and replay), parameter space and targets.
type job struct {
	name  string
	cfg   Config // replays that grade
	eq    Config // replays that give the equations (anchored closed loops)
	in    Input
	sp    *space
	ts    []target
	nFit  int
	nHold int
}

// FitAll fits one set of coefficients to several measured traces at once
// (light and saturated runs of one deployment, say): every iteration
// replays each trace on its own deployment and solves the equations of all
// of them together. The starting coefficients are cfg's, else the first
// trace's deployment's, else the model's own.
func FitAll(ctx context.Context, cfg Config, traces []Trace) (*Result, error) {
	kind, err := checkTraces(cfg, traces)
	if err != nil {
		return nil, err
	}
	first := cfg
	first.Deploy = traces[0].Deploy
	alpha, beta, err := startCoefficients(first, kind)
	if err != nil {
		return nil, err
	}
	res := &Result{Kind: kind, StartAlpha: alpha}
	jobs, err := newJobs(cfg, traces, kind, alpha, beta, res)
	if err != nil {
		return nil, err
	}
	if res.FitRequests == 0 {
		return nil, errors.New("fit: no request to fit: none is ok, past the warm-up, with consistent chunk times and outside the holdout")
	}
	sp := jobs[0].sp // every job's space maps θ to the same coefficients
	res.StartBeta = sp.beta
	prior := sp.theta()
	l := loopOf(cfg, kind, heldParams(cfg, kind, sp))
	out, err := Iterate(ctx, l, prior, func(ctx context.Context, iter int, theta []float64, solve bool) (Pass[graded], error) {
		var eqs []Equation
		var eq func(*job, *recorder)
		if solve {
			eq = func(j *job, rec *recorder) { eqs = append(eqs, equations(rec, j.sp, j.ts, theta, prior, l.Fixed)...) }
		}
		fe, he, per, err := replayAll(ctx, jobs, kind, theta, eq)
		if err != nil {
			return Pass[graded]{}, err
		}
		if cfg.Iteration != nil {
			a, b := sp.coefficients(theta)
			cfg.Iteration(iter, fe, he, a, b)
		}
		if solve && len(eqs) == 0 {
			return Pass[graded]{}, errors.New("fit: no equation: the replay completed none of the measured requests")
		}
		return Pass[graded]{Objective: fe.Objective(), Equations: eqs, Value: graded{fe, he, per}}, nil
	})
	if err != nil {
		return nil, err
	}
	res.Start, res.Iterations, res.Converged = out.Start.Value.fit, out.Passes, out.Converged
	res.Equations, res.Residual = out.Equations, out.Residual
	res.Spread = spread(out.Window, sp.nb)
	best := out.Kept.Value
	res.Alpha, res.Beta = sp.coefficients(out.Theta)
	res.Fit, res.Holdout, res.Chosen = best.fit, best.ho, out.Index
	res.PerTrace = best.perTrace
	for i := range res.PerTrace {
		res.PerTrace[i].Start = out.Start.Value.perTrace[i].Fit
		res.PerTrace[i].StartHoldout = out.Start.Value.perTrace[i].Holdout
	}
	res.Warnings = append(res.Warnings, warnings(res, out.Index, out.Mean.Value.fit)...)
	if kind == latency.KindPhysics {
		res.OnBound = physicsOnBound(res.Beta)
		for _, b := range res.OnBound {
			res.Warnings = append(res.Warnings, b.String())
		}
	}
	return res, nil
}

// graded is a replay's errors, pooled and per trace.
type graded struct {
	fit, ho  Errors
	perTrace []TraceErrors
}

// loopOf is the iteration of a fit: up to MaxIterations replays (10 by
// default) until no coefficient moves by more than Tolerance (0.001), each
// solve reweighted against outliers and pulled towards the start by Ridge
// (1e-9 blackbox, 1e-2 the physics models), the mean of the later solves
// kept (KeepMean).
func loopOf(cfg Config, kind latency.Kind, fixed []bool) Loop {
	l := Loop{Iterations: cfg.MaxIterations, Tolerance: cfg.Tolerance, Ridge: cfg.Ridge, Robust: robustPasses, Keep: KeepMean, Fixed: fixed}
	if l.Iterations <= 0 {
		l.Iterations = 10
	}
	if l.Tolerance <= 0 {
		l.Tolerance = 0.001
	}
	if l.Ridge <= 0 {
		l.Ridge = 1e-9
		if kind == latency.KindTrainedPhysics || kind == latency.KindPhysics {
			l.Ridge = 1e-2
		}
	}
	return l
}

// checkTraces checks that every trace has a single-instance deployment
// with one latency model, and returns the model's kind.
func checkTraces(cfg Config, traces []Trace) (latency.Kind, error) {
	var kind latency.Kind
	if len(traces) == 0 {
		return kind, errors.New("fit: no trace")
	}
	if cfg.Holdout < 0 || cfg.Holdout >= 1 || math.IsNaN(cfg.Holdout) {
		return kind, fmt.Errorf("fit: holdout share %v is not in [0, 1)", cfg.Holdout)
	}
	for i, tr := range traces {
		name := traceName(tr, i)
		if tr.Deploy == nil {
			return kind, fmt.Errorf("fit: %s: no deployment", name)
		}
		if tr.Deploy.IsCluster() {
			return kind, fmt.Errorf("fit: %s: the deployment is a cluster (several instances, admission or routing policies or latencies, or prefill/decode pools); fit models one instance", name)
		}
		if tr.Deploy.KVCPUBlocks > 0 {
			return kind, fmt.Errorf("fit: %s: the CPU KV tier's reload time is not a latency-model term; fit without kv_cpu_blocks", name)
		}
		k, err := latency.ParseKind(tr.Deploy.LatencyModel)
		if err != nil {
			return kind, fmt.Errorf("fit: %s: %w", name, err)
		}
		if i > 0 && k != kind {
			return kind, fmt.Errorf("fit: %s: latency model %s, but %s has %s: one fit fits one model's coefficients", name, k, traceName(traces[0], 0), kind)
		}
		kind = k
	}
	return kind, nil
}

// newJobs sets up each trace's replays, parameter space and targets, and
// counts the requests fitted, held out and with ITL data into res.
func newJobs(cfg Config, traces []Trace, kind latency.Kind, alpha, beta []float64, res *Result) ([]*job, error) {
	jobs := make([]*job, len(traces))
	for i, tr := range traces {
		j := &job{name: traceName(tr, i), in: tr.Input}
		j.cfg = cfg
		j.cfg.Deploy, j.cfg.Replay, j.cfg.Client, j.cfg.ContextGrowth = tr.Deploy, tr.Replay, tr.Client, tr.ContextGrowth
		j.cfg.RTTUs, j.cfg.WarmupRequests = tr.RTTUs, tr.WarmupRequests
		j.eq = j.cfg
		j.eq.anchored = tr.Replay.ClosedLoop
		m0, err := model(tr.Deploy, kind, alpha, beta)
		if err != nil {
			return nil, fmt.Errorf("fit: %s: %w", j.name, err)
		}
		if j.sp, err = newSpace(kind, m0, alpha, beta, len(traces) > 1); err != nil {
			return nil, err
		}
		j.nFit, j.nHold, j.ts = targets(tr.Input.Records, &j.cfg)
		res.FitRequests += j.nFit
		res.HoldoutRequests += j.nHold
		res.ITLRequests += attachITL(j.ts, tr.Input.Records, tr.Input.ITL)
		jobs[i] = j
	}
	return jobs, nil
}

// warnings say which coefficients were kept when not the iterates' mean,
// and what the fit could not use.
func warnings(res *Result, index int, mean Errors) []string {
	var w []string
	if index == 0 {
		w = append(w, fmt.Sprintf("no fitted coefficients replay better than the starting ones (the iterates' mean: error %.3g against %.3g); keeping the start",
			mean.Objective(), res.Start.Objective()))
	} else if index > 0 {
		w = append(w, fmt.Sprintf("the iterates' mean replays worse than the start (error %.3g against %.3g); keeping iterate %d (error %.3g)",
			mean.Objective(), res.Start.Objective(), index, res.Fit.Objective()))
	}
	if res.Fit.Missing > 0 {
		w = append(w, fmt.Sprintf("the replay did not complete %d measured requests (dropped or cut); they are left out of the error", res.Fit.Missing))
	}
	if !res.Converged && res.Spread > 0.05 {
		w = append(w, fmt.Sprintf("the coefficients still moved by up to %.0f%% between the last replays; their mean is kept", 100*res.Spread))
	}
	return w
}

func traceName(tr Trace, i int) string {
	if tr.Name != "" {
		return tr.Name
	}
	return fmt.Sprintf("trace %d", i+1)
}

// heldParams marks the parameters the solves keep at their starting
// values: A_tok unless FitTokenOverhead, the alphas HoldAlpha names, and for
// the physics model Q and A_end unless FitAlpha frees them.
func heldParams(cfg Config, kind latency.Kind, sp *space) []bool {
	fixed := make([]bool, sp.params())
	if !cfg.FitTokenOverhead && !(kind == latency.KindPhysics && cfg.FitAlpha[2]) {
		fixed[sp.nb+2] = true
	}
	for i, h := range cfg.HoldAlpha {
		if h {
			fixed[sp.nb+i] = true
		}
	}
	if kind == latency.KindPhysics {
		for i := range 2 {
			if !cfg.FitAlpha[i] {
				fixed[sp.nb+i] = true
			}
		}
	}
	return fixed
}

// replayAll replays every job with θ, hands each recorded replay of the
// equation kind to eq (if set), and returns the errors pooled over the
// traces and per trace.
func replayAll(ctx context.Context, jobs []*job, kind latency.Kind, theta []float64, eq func(*job, *recorder)) (fit, holdout Errors, per []TraceErrors, err error) {
	for _, j := range jobs {
		rec, fe, he, err := replayErrors(ctx, &j.eq, j.in.Records, j.sp, kind, j.ts, theta)
		if err != nil {
			return fit, holdout, nil, err
		}
		if j.eq.anchored {
			if _, fe, he, err = replayErrors(ctx, &j.cfg, j.in.Records, j.sp, kind, j.ts, theta); err != nil {
				return fit, holdout, nil, err
			}
		}
		if eq != nil {
			eq(j, rec)
		}
		fit, holdout = fit.merge(fe), holdout.merge(he)
		per = append(per, TraceErrors{Name: j.name, Fit: fe, Holdout: he, FitRequests: j.nFit, Holdouts: j.nHold})
	}
	return fit, holdout, per, nil
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
	case kind == latency.KindPhysics:
		gpu, err := latency.ResolveGPU(cfg.Deploy.GPU, cfg.Deploy.HardwareFile)
		if err != nil {
			return nil, nil, fmt.Errorf("fit: %w", err)
		}
		return latency.PhysicsDefaultAlpha(), latency.PhysicsDefaultBeta(gpu), nil
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
	return nil, nil, fmt.Errorf("fit: latency model %q has no coefficients to fit (want physics, blackbox or trained-physics)", kind)
}

// model builds the latency model of the deployment with coefficients a, b.
func model(d *deploy.Resolved, kind latency.Kind, a, b []float64) (latency.Model, error) {
	m, err := latency.New(latency.Config{Kind: kind, Model: d.Model, GPU: d.GPU, HardwareFile: d.HardwareFile, TP: d.TP, DP: d.DataParallel, Alpha: a, Beta: b})
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

// replayErrors replays with θ and measures its errors on both sets.
func replayErrors(ctx context.Context, cfg *Config, recs []tracev2.Record, sp *space, kind latency.Kind, ts []target, theta []float64) (*recorder, Errors, Errors, error) {
	a, b := sp.coefficients(theta)
	sp.at(theta)
	rec, err := simulate(ctx, cfg, recs, sp, kind, a, b)
	if err != nil {
		return nil, Errors{}, Errors{}, err
	}
	return rec, errorsOf(ts, rec.results, cfg.RTTUs, false), errorsOf(ts, rec.results, cfg.RTTUs, true), nil
}
