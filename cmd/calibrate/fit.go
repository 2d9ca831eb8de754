package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/des/latency"
	"servesim/internal/fit"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
)

// fitCommand is `calibrate fit`: fit the latency model's coefficients to a
// real trace and write them as a deployment YAML.
func fitCommand() cli.Command {
	flags := []ucli.Flag{
		&ucli.StringFlag{Name: "trace-header", Usage: "trace header YAML of a two-file trace (with --trace-data)"},
		&ucli.StringFlag{Name: "trace-data", Usage: "trace data CSV of a two-file trace (with --trace-header)"},
		&ucli.StringFlag{Name: "itl-data", Usage: "ITL CSV (request_id,chunk_index,timestamp_us); default: NAME.itl.csv beside the trace, if it exists"},
		cli.OutputFlag("the fitted deployment YAML (- = stdout)"),
		&ucli.Float64Flag{Name: "holdout", Usage: "share of the requests left out of the fit and graded apart, in [0, 1); drawn from --seed and the request ids"},
		cli.SeedFlag(),
		&ucli.Int64Flag{Name: "warmup-requests", Value: -1, Usage: "do not fit rows with request_id below N (they are still replayed); -1 = the header's warm_up_requests"},
		&ucli.Int64Flag{Name: "network-rtt-us", Value: -1, Usage: "round trip taken off the measured TTFT, µs; -1 = the header's network.measured_rtt_ms"},
		&ucli.IntFlag{Name: "max-iterations", Value: 10, Usage: "replays of the fixed-point iteration (one more checks the result)"},
		&ucli.BoolFlag{Name: "fit-token-overhead", Usage: "also fit A_tok (alpha[2]); by default it keeps its starting value, which the data cannot tell from the per-step constant"},
		&ucli.IntSliceFlag{Name: "hold-alpha", Usage: "keep these alpha coefficients (indices 0-2) at their starting values, e.g. 1 for blackbox's per-prompt-token queue delay"},
		&ucli.StringFlag{Name: "session-mode", Value: "fixed", DefaultText: "the trace's client, else fixed", Usage: "as replay's: fixed (every row at its own time) or closed-loop (the errors are those of a replay whose later session rounds follow the simulated completions)"},
		&ucli.DurationFlag{Name: "think-time", Usage: "closed-loop think time when neither the row nor the trace gives one"},
	}
	flags = append(flags, cli.TraceDeploymentFlags()...)
	flags = append(flags, cli.DeploymentFlags()...)
	return cli.Command{
		Name:      "calibrate fit",
		Usage:     "fit the latency model's coefficients so that replaying a real trace reproduces it",
		ArgsUsage: "REAL",
		Description: `calibrate fit replays a real trace (TraceV2, any form; - for stdin) through the
simulator of the deployment the trace's header states (x_ext.deployment, else BLIS's
server keys), under --deployment and the flags given (each one that contradicts the
trace is a warning; --ignore-trace-deployment uses the flags alone), in the session
mode of the trace's client, and fits the coefficients of its
latency model (--latency-model blackbox or trained-physics) so that the replay
reproduces the measured TTFT and E2E of every request, and the token times of
the ITL file when it has one chunk per token. Starting coefficients are
--alpha-coeffs/--beta-coeffs, else the model's own.

Method: a fixed-point iteration. Each round replays the trace with the current
coefficients, attributes each request's TTFT and decode time to the steps the
replay put it in, and solves for all requests at once by non-negative least
squares on relative errors; the mean of the last rounds is kept. A_tok (alpha[2])
keeps its starting value unless --fit-token-overhead.

Closed loops: with --session-mode closed-loop (as given to replay), the errors
shown, and the choice between the fitted and the starting coefficients, are
those of the closed-loop replay that will grade them; in the replays that give
the equations a later round also waits for its measured send time, which keeps
their batches on the measured ones. Each solve is reweighted towards least
absolute relative error (MAPE's measure), so a few stalled requests do not
pull the coefficients.

Output (-o, default stdout): a deployment YAML with the fitted latency_model,
alpha_coeffs and beta_coeffs and the deployment keys that differ from the
defaults. Give it to run or replay with --deployment FILE; flags given beside
it still override it. stderr: the error before and after the fit (MAPE of TTFT
and E2E as calibrate grades them) and, with --holdout, on the held-out requests.

Exit codes: 0 success, 1 runtime failure, 2 bad usage or invalid input.

Example: fit blackbox coefficients on a captured run, then check the replay.

   calibrate fit cap.csv --model qwen3-14b --gpu H100 --latency-model blackbox \
             --holdout 0.2 -o qwen-h100.yaml
   replay cap.csv --deployment qwen-h100.yaml --results-path sim.json
   calibrate cap.csv sim.json --fail-under good`,
		Flags:  flags,
		Action: fitAction,
	}
}

// fitAction validates every flag, reads the trace and its ITL data, fits,
// and writes the deployment YAML and the summary.
func fitAction(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	args, err := cli.Positional(c, 1)
	if err != nil {
		return err
	}
	holdout := c.Float64("holdout")
	if math.IsNaN(holdout) || holdout < 0 || holdout >= 1 {
		return cli.Usagef("--holdout %v: want a share in [0, 1)", holdout)
	}
	if c.Int64("warmup-requests") < -1 {
		return cli.Usagef("--warmup-requests %d: want -1 (the header's value) or a count >= 0", c.Int64("warmup-requests"))
	}
	if c.Int64("network-rtt-us") < -1 {
		return cli.Usagef("--network-rtt-us %d: want -1 (the header's RTT) or a value >= 0", c.Int64("network-rtt-us"))
	}
	if c.Int("max-iterations") < 1 {
		return cli.Usagef("--max-iterations %d: want at least 1", c.Int("max-iterations"))
	}
	var hold [3]bool
	for _, i := range c.IntSlice("hold-alpha") {
		if i < 0 || i > 2 {
			return cli.Usagef("--hold-alpha %d: want an alpha index 0, 1 or 2", i)
		}
		hold[i] = true
	}
	var opts replay.TraceOptions
	switch c.String("session-mode") {
	case cli.SessionFixed, cli.SessionClosedLoop: // the trace's client may change it
	default:
		return cli.Usagef("--session-mode %q: want fixed or closed-loop", c.String("session-mode"))
	}
	if d := c.Duration("think-time"); d < 0 {
		return cli.Usagef("--think-time %v is negative", d)
	} else {
		opts.ThinkTimeUs = d.Microseconds()
	}
	in, err := fitTraceInput(c, args)
	if err != nil {
		return err
	}
	if _, err := cli.Deployment(c); err != nil {
		return err // a bad flag or --deployment file, before the trace is read
	}
	out, err := cli.CreateOutput(c.String("output"), stdio.Out)
	if err != nil {
		return err
	}
	defer out.Abort()
	tr, itl, err := readFitInputs(in, c.String("itl-data"), stdio.In, log)
	if err != nil {
		return err
	}
	// The trace is fitted on the deployment and client it was made with,
	// under the flags (as replay does).
	warn := func(m string) { log.Warn(m) }
	dcfg, err := cli.TraceDeployment(c, tr.Name, tr.Header, warn)
	if err != nil {
		return err
	}
	mode, err := cli.TraceSessionMode(c, tr.Name, tr.Header, warn)
	if err != nil {
		return err
	}
	opts.ClosedLoop = mode == cli.SessionClosedLoop
	kind, err := latency.ParseKind(dcfg.LatencyModel)
	if err != nil {
		return cli.Usagef("--latency-model: %v", err)
	}
	if kind != latency.KindBlackbox && kind != latency.KindTrainedPhysics {
		return cli.Usagef("latency model %s (--latency-model, or the trace's deployment) has no coefficients to fit; use blackbox or trained-physics", kind)
	}
	start := dcfg
	if kind == latency.KindBlackbox && start.AlphaCoeffs == nil {
		// No built-in entry is needed to start: fit supplies a start.
		if a, b, err := latency.BlackboxCoefficients(dcfg.Model, dcfg.GPU, max(dcfg.TP, 1)); err == nil {
			start.AlphaCoeffs, start.BetaCoeffs = a, b
		} else {
			start.AlphaCoeffs, start.BetaCoeffs = []float64{0, 0, 0}, []float64{10000, 20, 100}
			log.Info("no built-in blackbox coefficients for this deployment; starting from 10 ms per step", "model", dcfg.Model, "gpu", dcfg.GPU)
		}
	}
	dep, err := deploy.Resolve(start)
	if err != nil {
		return err
	}
	cfg := fit.Config{
		Deploy:           dep,
		Seed:             c.Int64("seed"),
		RTTUs:            c.Int64("network-rtt-us"),
		WarmupRequests:   c.Int64("warmup-requests"),
		Holdout:          holdout,
		MaxIterations:    c.Int("max-iterations"),
		FitTokenOverhead: c.Bool("fit-token-overhead"),
		HoldAlpha:        hold,
		Replay:           opts,
	}
	if tr.Header != nil {
		if !c.IsSet("seed") && tr.Header.WorkloadSeed != nil {
			cfg.Seed = *tr.Header.WorkloadSeed // as replay does
		}
		cfg.ContextGrowth = tr.Header.SessionContextGrowth
		if cfg.WarmupRequests < 0 {
			cfg.WarmupRequests = int64(tr.Header.WarmUpRequests)
		}
		if cfg.RTTUs < 0 && tr.Header.Network != nil {
			cfg.RTTUs = int64(tr.Header.Network.MeasuredRTTMs * 1000)
		}
		if m := tr.Header.Mode; m != "" && m != tracev2.ModeReal {
			log.Warn("the trace is not a measured one; fit reproduces a real run", "mode", m)
		}
	}
	cfg.WarmupRequests, cfg.RTTUs = max(cfg.WarmupRequests, 0), max(cfg.RTTUs, 0)
	cfg.Iteration = func(iter int, f, h fit.Errors, _, _ []float64) {
		log.Debug("replay", "iteration", iter, "ttft_mape", f.TTFTMAPE, "e2e_mape", f.E2EMAPE)
	}
	res, err := fit.Fit(ctx, cfg, fit.Input{Records: tr.Records, ITL: itl})
	if err != nil {
		if ctx.Err() != nil {
			return err // interrupted: nothing was written
		}
		return cli.WithCode(cli.ExitUsage, err) // a trace or deployment fit cannot use
	}
	for _, w := range res.Warnings {
		log.Warn(w)
	}
	final := dcfg
	final.LatencyModel, final.AlphaCoeffs, final.BetaCoeffs = string(kind), res.Alpha, res.Beta
	doc, err := fittedYAML(final, fitComment(res, tr.Name))
	if err != nil {
		return err
	}
	if _, err := out.Write(doc); err != nil {
		return fmt.Errorf("write %s: %w", c.String("output"), err)
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if !c.Bool("quiet") {
		writeFitSummary(stdio.Err, final, res)
	}
	return nil
}

// fitTraceInput is the trace as the arguments name it.
func fitTraceInput(c *ucli.Context, args []string) (tracev2.Input, error) {
	hp, dp := c.String("trace-header"), c.String("trace-data")
	switch {
	case len(args) == 1 && hp != "" && dp != "":
		return tracev2.Input{}, cli.Usagef("the real trace is given twice: %q and --trace-header/--trace-data", args[0])
	case len(args) == 1:
		return tracev2.Input{Path: args[0], HeaderPath: hp, DataPath: dp}, nil
	case hp == "" && dp == "":
		return tracev2.Input{}, cli.Usagef("no real trace: give REAL (a trace file, or - for stdin) or --trace-header and --trace-data")
	}
	return tracev2.Input{HeaderPath: hp, DataPath: dp}, nil
}

// readFitInputs reads the trace (normalised) and its ITL rows, if any.
func readFitInputs(in tracev2.Input, itlPath string, stdin io.Reader, log *slog.Logger) (*tracev2.Trace, []tracev2.ITLRow, error) {
	in.Stdin = stdin
	r, _, err := tracev2.Open(in, tracev2.Options{Warn: func(msg string) { log.Warn(msg) }})
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	tr, err := tracev2.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	if _, err := tr.IndexByID(); err != nil {
		return nil, nil, err // replay keys requests by id
	}
	if itlPath == "" {
		if itlPath = siblingITL(in); itlPath != "" {
			log.Info("using the ITL data found beside the trace (--itl-data to choose another)", "file", itlPath)
		}
	}
	if itlPath == "" {
		return tr, nil, nil
	}
	rc, name, err := cli.OpenInput(itlPath, stdin)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	rows, err := tracev2.ReadITL(rc, name, tr.Origin)
	if err != nil {
		return nil, nil, err
	}
	return tr, rows, nil
}

// writeFitSummary tells on stderr what was fitted and how well.
func writeFitSummary(w io.Writer, d deploy.Config, res *fit.Result) {
	var b strings.Builder
	fmt.Fprintf(&b, "calibrate fit: %s on %s/%s TP %d: %d requests fitted", res.Kind, d.Model, d.GPU, max(d.TP, 1), res.FitRequests)
	if res.HoldoutRequests > 0 {
		fmt.Fprintf(&b, ", %d held out", res.HoldoutRequests)
	}
	if res.ITLRequests > 0 {
		fmt.Fprintf(&b, ", %d with ITL segments", res.ITLRequests)
	}
	conv := "converged"
	if !res.Converged {
		conv = fmt.Sprintf("mean of the last rounds, spread %.1f%%", 100*res.Spread)
	}
	fmt.Fprintf(&b, "; %d replays (%s)\n", res.Iterations, conv)
	fmt.Fprintf(&b, "alpha_coeffs: %s\nbeta_coeffs:  %s\n", floats(res.Alpha), floats(res.Beta))
	fmt.Fprintf(&b, "%-10s %10s %10s", "MAPE", "start", "fitted")
	if res.Holdout.N > 0 {
		fmt.Fprintf(&b, " %10s", "holdout")
	}
	b.WriteByte('\n')
	for _, m := range []struct {
		name string
		get  func(fit.Errors) float64
	}{{"ttft", func(e fit.Errors) float64 { return e.TTFTMAPE }}, {"e2e", func(e fit.Errors) float64 { return e.E2EMAPE }}} {
		fmt.Fprintf(&b, "%-10s %9.1f%% %9.1f%%", m.name, 100*m.get(res.Start), 100*m.get(res.Fit))
		if res.Holdout.N > 0 {
			fmt.Fprintf(&b, " %9.1f%%", 100*m.get(res.Holdout))
		}
		b.WriteByte('\n')
	}
	io.WriteString(w, b.String())
}

func floats(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.6g", x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
