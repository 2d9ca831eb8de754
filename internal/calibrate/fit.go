package calibrate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/exitcode"
	"servesim/internal/fit"
	"servesim/internal/outfile"
	"servesim/internal/tracev2/input"
)

// Fit is one run of calibrate fit, every flag already checked.
type Fit struct {
	Traces   FitArgs
	Settings fit.Settings
	Resolver fit.Resolver
	// Seed draws the holdout; SeedSet says it was given, else the first
	// trace's workload seed is taken, as replay takes it.
	Seed    int64
	SeedSet bool
	// Config carries the fit's own settings (holdout, iterations, which
	// alphas are held or freed); its start and seed are filled in here.
	Config fit.Config
	Output string // the fitted deployment YAML; "" or "-" is Stdout
	Quiet  bool   // no summary on Stderr
	// Inputs are the files the command line names besides the traces
	// (--deployment), which Output must not replace.
	Inputs []outfile.Named

	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Log            *slog.Logger
}

// RunFit reads each trace and its ITL data, fits one set of coefficients to
// all of them, and writes the deployment YAML (the first trace's
// deployment, fitted) and the summary.
func RunFit(ctx context.Context, f Fit) error {
	inputs, err := fitTraceInputs(f.Traces)
	if err != nil {
		return err
	}
	if err := checkFitFiles(f, inputs); err != nil {
		return err
	}
	if err := f.Resolver.Check(); err != nil {
		return err // a bad flag or --deployment file, before the traces are read
	}
	out, err := outfile.Open(f.Output, f.Stdout)
	if err != nil {
		return err
	}
	defer out.Abort()
	fitted, err := fitInputs(ctx, f, inputs)
	if err != nil {
		return err
	}
	doc, err := fit.FittedYAML(fitted.Deploy, fitted.Comment, fitted.ModelFree)
	if err != nil {
		return err
	}
	if _, err := out.Write(doc); err != nil {
		return fmt.Errorf("write %s: %w", f.Output, err)
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if !f.Quiet {
		fit.WriteSummary(f.Stderr, fitted.Deploy, fitted.Result)
	}
	return nil
}

// Fitted is the outcome of a fit: the first trace's deployment with the
// fitted coefficients (or, for traces of several servers, what they
// share), the fit's result, and the comment its YAML carries.
type Fitted struct {
	Deploy    deploy.Config
	Result    *fit.Result
	Comment   string
	ModelFree bool // the traces are of different servers
}

// FitTraces is calibrate fit without its files: it fits the traces at
// paths (each with the ITL file found beside it) and returns the fitted
// deployment. f's Traces, Output and Stdout are not used.
func FitTraces(ctx context.Context, f Fit, paths []string) (Fitted, error) {
	var inputs []input.Config
	for _, p := range paths {
		inputs = append(inputs, input.Config{Paths: []string{p}})
	}
	if err := f.Resolver.Check(); err != nil {
		return Fitted{}, err
	}
	return fitInputs(ctx, f, inputs)
}

// fitInputs reads the traces and fits them.
func fitInputs(ctx context.Context, f Fit, inputs []input.Config) (Fitted, error) {
	traces, deploys, kind, seed, err := prepareFit(f, inputs)
	if err != nil {
		return Fitted{}, err
	}
	first := deploys[0]
	cfg := f.Config
	cfg.StartAlpha, cfg.StartBeta = fit.StartOf(first)
	cfg.Seed = seed
	cfg.Iteration = func(iter int, fe, _ fit.Errors, _, _ []float64) {
		f.Log.Debug("replay", "iteration", iter, "ttft_mape", fe.TTFTMAPE, "e2e_mape", fe.E2EMAPE)
	}
	res, err := fit.FitAll(ctx, cfg, traces)
	if err != nil {
		if ctx.Err() != nil {
			return Fitted{}, err // interrupted: nothing was written
		}
		return Fitted{}, exitcode.AsUsage(err) // traces or a deployment fit cannot use
	}
	for _, w := range res.Warnings {
		f.Log.Warn(w)
	}
	var names []string
	for _, t := range traces {
		names = append(names, t.Name)
	}
	// Traces of several servers (models, GPUs, parallelism) share the
	// coefficients, shares of peaks and µs costs, and nothing else: the
	// file names no server, and each trace replays on its own.
	final, modelFree := first, !deploy.SameServer(deploys)
	if modelFree {
		final = deploy.Common(deploys)
	}
	final.LatencyModel, final.AlphaCoeffs, final.BetaCoeffs = string(kind), res.Alpha, res.Beta
	final.StepTimeSigma = fit.StepTimeSigma(res)
	comment := fit.Comment(res, strings.Join(names, ", "))
	if modelFree {
		comment += "\nThe traces are of different servers: the file states the coefficients and what every trace shares,\nno model, GPU or parallelism; replay each trace with it on its own deployment."
	}
	return Fitted{Deploy: final, Result: res, Comment: comment, ModelFree: modelFree}, nil
}

// prepareFit reads every trace and sets up its replay; every trace must
// use one latency model with coefficients to fit.
func prepareFit(f Fit, inputs []input.Config) ([]fit.Trace, []deploy.Config, latency.Kind, int64, error) {
	var traces []fit.Trace
	var deploys []deploy.Config
	var kind latency.Kind
	seed := f.Seed
	for i, in := range inputs {
		itlPath := ""
		if len(inputs) == 1 {
			itlPath = f.Traces.ITLData
		}
		if !f.Settings.IgnoreTraceClient {
			in.DeploymentKey = deploy.CheckTraceKey // a bad value refused at its place in the header
		}
		tr, itl, err := readFitTrace(in, itlPath, f.Stdin, f.Log)
		if err != nil {
			return nil, deploys, kind, seed, err
		}
		if len(tr.Records) == 0 {
			return nil, deploys, kind, seed, exitcode.Usagef("%s: the trace has no rows: nothing to fit", tr.Name)
		}
		p, err := fit.PrepareTrace(tr, itl, f.Settings, f.Resolver, f.Log)
		if err != nil {
			return nil, deploys, kind, seed, err
		}
		if i == 0 && p.Seed != nil && !f.SeedSet {
			seed = *p.Seed // the first trace's workload seed, as replay takes it
		}
		k, err := latency.ParseKind(p.Deploy.LatencyModel)
		if err != nil {
			return nil, deploys, kind, seed, exitcode.Usagef("--latency-model: %v", err)
		}
		if k != latency.KindPhysics && k != latency.KindBlackbox && k != latency.KindTrainedPhysics {
			return nil, deploys, kind, seed, exitcode.Usagef("%s: latency model %s (--latency-model, or the trace's deployment) has no coefficients to fit; use physics, blackbox or trained-physics", p.Trace.Name, k)
		}
		deploys = append(deploys, p.Deploy)
		if i == 0 {
			kind = k
		} else if k != kind {
			return nil, deploys, kind, seed, exitcode.Usagef("%s: latency model %s, but %s has %s: one fit fits one model's coefficients (--latency-model to choose one for all)", p.Trace.Name, k, traces[0].Name, kind)
		}
		traces = append(traces, p.Trace)
	}
	return traces, deploys, kind, seed, nil
}
