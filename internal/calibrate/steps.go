package calibrate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/exitcode"
	"servesim/internal/fit"
	"servesim/internal/outfile"
	"servesim/internal/steps"
	"servesim/internal/tracev2"
)

// DeploymentResolver decides a trace's deployment from the command line,
// as replay does.
type DeploymentResolver interface {
	// Check validates the flags and the --deployment file before any
	// trace is read.
	Check() error
	Deployment(name string, h *tracev2.Header, warn func(string)) (deploy.Config, error)
}

// Steps is one run of calibrate steps, every flag already checked.
type Steps struct {
	Trace    FitArgs // one trace and its ITL data
	Resolver DeploymentResolver
	WindowUs int64  // steps.Options.WindowUs
	Format   string // text, json or markdown
	Output   string // "" or "-" is Stdout
	FitOut   string // "" = no fit; else the fitted deployment YAML (physics model)

	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Log            *slog.Logger
}

// RunSteps extracts the engine steps of a real trace from its chunk times
// and writes them by step type beside the step times its deployment's
// latency model predicts (docs/calibrate.md).
func RunSteps(ctx context.Context, s Steps) error {
	if !slices.Contains(steps.Formats(), s.Format) {
		return exitcode.Usagef("--format %q: want one of %v", s.Format, steps.Formats())
	}
	if s.WindowUs < 0 {
		return exitcode.Usagef("--step-window %d µs is negative", s.WindowUs)
	}
	inputs, err := fitTraceInputs(s.Trace)
	if err != nil {
		return err
	}
	if len(inputs) != 1 {
		return exitcode.Usagef("calibrate steps reads one trace, got %d", len(inputs))
	}
	if err := s.Resolver.Check(); err != nil {
		return err
	}
	ins := append(inputs[0].Files(), outfile.Named{What: "--itl-data", Path: s.Trace.ITLData})
	outs := []outfile.Named{{What: "--output", Path: s.Output}, {What: "--fit-out", Path: s.FitOut}}
	if err := outfile.Check(outs, ins); err != nil {
		return err
	}
	out, err := outfile.Open(s.Output, s.Stdout)
	if err != nil {
		return err
	}
	defer out.Abort()
	tr, itl, err := readFitTrace(inputs[0], s.Trace.ITLData, s.Stdin, s.Log)
	if err != nil {
		return err
	}
	cfg, err := s.Resolver.Deployment(tr.Name, tr.Header, func(w string) { s.Log.Warn(w) })
	if err != nil {
		return err
	}
	res, err := deploy.Resolve(cfg)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ex, err := steps.Extract(StepRequests(tr, itl), steps.Options{WindowUs: s.WindowUs, Budget: cfg.MaxNumBatchedTokens})
	if err != nil {
		return exitcode.Usagef("%s: %v", tr.Name, err)
	}
	rep := steps.NewReport(ex, steps.Table(ex.Steps, res.Instance.Latency.StepTime))
	rep.Trace, rep.Model, rep.GPU, rep.Latency, rep.WindowUs = tr.Name, cfg.Model, cfg.GPU, cfg.LatencyModel, s.WindowUs
	if err := rep.Write(out, s.Format); err != nil {
		return fmt.Errorf("write %s: %w", s.Output, err)
	}
	if s.FitOut != "" {
		if err := fitSteps(s, tr.Name, cfg, res, ex); err != nil {
			return err
		}
	}
	return out.Commit()
}

// fitSteps fits the deployment's physics model to the extracted steps
// and writes the fitted deployment to s.FitOut.
func fitSteps(s Steps, name string, cfg deploy.Config, res *deploy.Resolved, ex *steps.Extraction) error {
	m, ok := res.Instance.Latency.(*latency.Physics)
	if !ok {
		return exitcode.Usagef("--fit-out fits the physics latency model; the deployment's is %s", cfg.LatencyModel)
	}
	var ls []latency.Step
	var us []float64
	for i := range ex.Steps {
		ls = append(ls, *steps.LatencyStep(&ex.Steps[i]))
		us = append(us, float64(ex.Steps[i].DurationUs()))
	}
	alpha, beta := m.Coefficients()
	f, err := fit.FitSteps(m, beta, ls, us)
	if err != nil {
		return exitcode.Usagef("--fit-out: %v", err)
	}
	s.Log.Info("fitted the step times", "steps", f.Steps, "rms_before", f.Before, "rms_after", f.After)
	cfg.LatencyModel, cfg.AlphaCoeffs, cfg.BetaCoeffs = string(latency.KindPhysics), alpha, f.Beta
	comment := fmt.Sprintf("Fitted by calibrate steps on the %d engine steps read from the chunk times of %s.\nRMS relative error of the step times before: %.1f%%, after: %.1f%%.\nUse: run or replay --deployment THIS_FILE (flags given beside it override it).",
		f.Steps, name, 100*f.Before, 100*f.After)
	doc, err := fit.FittedYAML(cfg, comment, false)
	if err != nil {
		return err
	}
	w, err := outfile.Open(s.FitOut, s.Stdout)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := w.Write(doc); err != nil {
		return fmt.Errorf("write %s: %w", s.FitOut, err)
	}
	return w.Commit()
}

// StepRequests are the chunk timelines of tr's streamed, ok requests: the
// chunks of the ITL rows that can carry a token when they have the request
// (none before the first token; at most one a token, so the finish-only
// and usage-only events a server sends after the last token drop out),
// else its first token (or first chunk) and last chunk. A request's prompt
// is what the server computed: its server-side prompt less the tokens its
// prefix cache held.
func StepRequests(tr *tracev2.Trace, itl []tracev2.ITLRow) []steps.Request {
	chunks := map[int64][]int64{}
	for _, r := range itl {
		chunks[r.RequestID] = append(chunks[r.RequestID], r.TimestampUs)
	}
	var reqs []steps.Request
	for i := range tr.Records {
		rec := &tr.Records[i]
		if rec.Status != "ok" || !rec.Streaming || rec.OutputTokens < 1 || rec.FirstChunkTimeUs <= 0 {
			continue
		}
		prompt := rec.ServerInputTokens
		if prompt <= 0 {
			prompt = rec.InputTokens + rec.PrefixLength
		}
		r := steps.Request{ID: rec.RequestID, Prompt: max(prompt-rec.CachedTokens, 1), Output: rec.OutputTokens}
		if c, ok := chunks[rec.RequestID]; ok {
			r.Chunks = tokenChunks(slices.Sorted(slices.Values(c)), rec.FirstTokenTimeUs, rec.OutputTokens)
		} else {
			first := rec.FirstChunkTimeUs
			if rec.FirstTokenTimeUs > 0 {
				first = rec.FirstTokenTimeUs
			}
			r.Chunks = []int64{first}
			if rec.LastChunkTimeUs > first {
				r.Chunks = append(r.Chunks, rec.LastChunkTimeUs)
			}
		}
		reqs = append(reqs, r)
	}
	return reqs
}

// tokenChunks are the times of sorted that can carry a token: from the
// first token's time (when known) on, and no more than the tokens.
func tokenChunks(sorted []int64, firstToken int64, tokens int) []int64 {
	if firstToken > 0 {
		i, _ := slices.BinarySearch(sorted, firstToken)
		sorted = sorted[i:]
	}
	return sorted[:min(len(sorted), tokens)]
}
