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
		&ucli.StringFlag{Name: "itl-data", Usage: "ITL CSV (request_id,chunk_index,timestamp_us)", DefaultText: "NAME.itl.csv beside the trace, if it exists"},
		cli.OutputFlag("the fitted deployment YAML (- = stdout)"),
		&ucli.Float64Flag{Name: "holdout", Usage: "share of the requests left out of the fit and graded apart, in [0, 1); drawn from --seed and the request ids"},
		cli.SeedFlag(),
		&ucli.Int64Flag{Name: "warmup-requests", Value: -1, Usage: "do not fit rows with request_id below N (they are still replayed); -1 = the header's warm_up_requests"},
		&ucli.Int64Flag{Name: "network-rtt-us", Value: -1, Usage: "round trip taken off the measured TTFT, µs; -1 = the header's network.measured_rtt_ms"},
		&ucli.IntFlag{Name: "max-iterations", Value: 10, Usage: "replays of the fixed-point iteration (one more checks the result)"},
		&ucli.BoolFlag{Name: "fit-token-overhead", Usage: "also fit A_tok (alpha[2]); otherwise it keeps its starting value, which the data cannot tell from the per-step constant"},
		&ucli.IntSliceFlag{Name: "hold-alpha", Usage: "keep these alpha coefficients (indices 0-2) at their starting values, e.g. 1 for blackbox's per-prompt-token queue delay"},
		&ucli.IntSliceFlag{Name: "fit-alpha", Usage: "physics model: also fit these alphas (0: Q, 1: A_end, 2: A_tok), each kept within [0, 0.1 s]; by default they keep their physical starting values (a free Q fitted on a saturated trace soaks up the server's queue)"},
		&ucli.StringFlag{Name: "session-mode", Value: "fixed", DefaultText: "the trace's client, else fixed", Usage: "as replay's: fixed (every row at its own time) or closed-loop (the errors are those of a replay whose later session rounds follow the simulated completions)"},
		&ucli.DurationFlag{Name: "think-time", Usage: "closed-loop think time when neither the row nor the trace gives one"},
	}
	flags = append(flags, cli.TraceDeploymentFlags()...)
	flags = append(flags, cli.ClientFlags(true)...)
	flags = append(flags, cli.DeploymentFlags()...)
	return cli.Command{
		Name:      "calibrate fit",
		Usage:     "fit the latency model's coefficients so that replaying real traces reproduces them",
		ArgsUsage: "REAL [REAL...]",
		Description: `calibrate fit replays real traces (TraceV2, any form; - for stdin) through the
simulator, and fits one set of coefficients of their latency model so that the
replays reproduce the measured TTFT and E2E of every request, and the token times
of an ITL file when it has one chunk per token (NAME.itl.csv beside each trace,
or --itl-data with one trace). Fit light, loaded and saturated runs of a server
together: one set that predicts all of them is what capacity planning needs.

Each trace is replayed as replay would: on the deployment its header states
(x_ext.deployment, else BLIS's server keys) under --deployment and the flags
given (each one that contradicts a trace is a warning; --ignore-trace-deployment
uses the flags alone), with the trace's client (its cap on requests in flight,
from the header or found in the rows; --client-max-concurrency sets it) and in
its session mode. Every trace must use the same latency model.

The physics model (the default) fits the GPU's shares of its peak FLOP/s and
bandwidth; its fixed costs, attention and KV shares and Q and A_end keep their
physical starting values (--fit-alpha frees alphas), which per-request latencies
cannot tell from the shares. blackbox and trained-physics (BLIS's) fit their
coefficients as before. Starting coefficients are --alpha-coeffs/--beta-coeffs,
else the deployment's, else the model's own.

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

Examples:

   # One set of physics coefficients from a light and a saturated capture,
   # then the prediction of a third load, never fitted:
   calibrate fit light.csv saturated.csv --holdout 0.2 -o h100.yaml
   replay medium.csv --deployment h100.yaml --results-path sim.json
   calibrate medium.csv sim.json --fail-under good

   # BLIS's blackbox coefficients for one captured run:
   calibrate fit cap.csv --model qwen3-14b --gpu H100 --latency-model blackbox -o bb.yaml`,
		Flags:  flags,
		Action: fitAction,
	}
}

// maxFitTraces bounds the traces of one fit (each is replayed every round).
const maxFitTraces = 64

// fitSettings are the validated flags shared by every trace of a fit.
type fitSettings struct {
	holdout float64
	hold    [3]bool
	free    [3]bool
	opts    replay.TraceOptions // session mode and think time as the flags give them
}

func parseFitSettings(c *ucli.Context) (*fitSettings, error) {
	s := &fitSettings{holdout: c.Float64("holdout")}
	if math.IsNaN(s.holdout) || s.holdout < 0 || s.holdout >= 1 {
		return nil, cli.Usagef("--holdout %v: want a share in [0, 1)", s.holdout)
	}
	if c.Int64("warmup-requests") < -1 {
		return nil, cli.Usagef("--warmup-requests %d: want -1 (the header's value) or a count >= 0", c.Int64("warmup-requests"))
	}
	if c.Int64("network-rtt-us") < -1 {
		return nil, cli.Usagef("--network-rtt-us %d: want -1 (the header's RTT) or a value >= 0", c.Int64("network-rtt-us"))
	}
	if n := c.Int("max-iterations"); n < 1 || n > 1000 {
		return nil, cli.Usagef("--max-iterations %d: want 1 to 1000", n)
	}
	for _, f := range []struct {
		flag string
		dst  *[3]bool
	}{{"hold-alpha", &s.hold}, {"fit-alpha", &s.free}} {
		for _, i := range c.IntSlice(f.flag) {
			if i < 0 || i > 2 {
				return nil, cli.Usagef("--%s %d: want an alpha index 0, 1 or 2", f.flag, i)
			}
			f.dst[i] = true
		}
	}
	switch c.String("session-mode") {
	case "fixed":
	case "closed-loop":
		s.opts.ClosedLoop = true
	default:
		return nil, cli.Usagef("--session-mode %q: want fixed or closed-loop", c.String("session-mode"))
	}
	if d := c.Duration("think-time"); d < 0 {
		return nil, cli.Usagef("--think-time %v is negative", d)
	} else {
		s.opts.ThinkTimeUs = d.Microseconds()
	}
	return s, nil
}

// fitAction validates every flag, reads each trace and its ITL data, fits
// one set of coefficients to all of them, and writes the deployment YAML
// (the first trace's deployment, fitted) and the summary.
func fitAction(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	args, err := cli.Positional(c, maxFitTraces)
	if err != nil {
		return err
	}
	set, err := parseFitSettings(c)
	if err != nil {
		return err
	}
	inputs, err := fitTraceInputs(c, args)
	if err != nil {
		return err
	}
	if _, err := cli.Deployment(c); err != nil {
		return err // a bad flag or --deployment file, before the traces are read
	}
	out, err := cli.CreateOutput(c.String("output"), stdio.Out)
	if err != nil {
		return err
	}
	defer out.Abort()
	var traces []fit.Trace
	var first deploy.Config
	var kind latency.Kind
	var start fit.Config
	seed := c.Int64("seed")
	for i, in := range inputs {
		ft, dcfg, hseed, err := prepareFitTrace(c, set, in, len(inputs), stdio.In, log)
		if err != nil {
			return err
		}
		if i == 0 && hseed != nil && !c.IsSet("seed") {
			seed = *hseed // the first trace's workload seed, as replay takes it
		}
		k, err := latency.ParseKind(dcfg.LatencyModel)
		if err != nil {
			return cli.Usagef("--latency-model: %v", err)
		}
		if k != latency.KindPhysics && k != latency.KindBlackbox && k != latency.KindTrainedPhysics {
			return cli.Usagef("%s: latency model %s (--latency-model, or the trace's deployment) has no coefficients to fit; use physics, blackbox or trained-physics", ft.Name, k)
		}
		if i == 0 {
			first, kind = dcfg, k
			start = fitStart(dcfg)
		} else if k != kind {
			return cli.Usagef("%s: latency model %s, but %s has %s: one fit fits one model's coefficients (--latency-model to choose one for all)", ft.Name, k, traces[0].Name, kind)
		}
		traces = append(traces, ft)
	}
	cfg := fit.Config{
		StartAlpha: start.StartAlpha, StartBeta: start.StartBeta,
		Seed:             seed,
		Holdout:          set.holdout,
		MaxIterations:    c.Int("max-iterations"),
		FitTokenOverhead: c.Bool("fit-token-overhead"),
		HoldAlpha:        set.hold,
		FitAlpha:         set.free,
	}
	cfg.Iteration = func(iter int, f, h fit.Errors, _, _ []float64) {
		log.Debug("replay", "iteration", iter, "ttft_mape", f.TTFTMAPE, "e2e_mape", f.E2EMAPE)
	}
	res, err := fit.FitAll(ctx, cfg, traces)
	if err != nil {
		if ctx.Err() != nil {
			return err // interrupted: nothing was written
		}
		return cli.WithCode(cli.ExitUsage, err) // traces or a deployment fit cannot use
	}
	for _, w := range res.Warnings {
		log.Warn(w)
	}
	final := first
	final.LatencyModel, final.AlphaCoeffs, final.BetaCoeffs = string(kind), res.Alpha, res.Beta
	var names []string
	for _, t := range traces {
		names = append(names, t.Name)
	}
	doc, err := fittedYAML(final, fitComment(res, strings.Join(names, ", ")))
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

// fitStart is where the fit starts: the deployment's coefficients (set by
// blackboxStart for blackbox); fit supplies the other models' defaults.
func fitStart(d deploy.Config) fit.Config {
	var s fit.Config
	if d.AlphaCoeffs != nil && d.BetaCoeffs != nil {
		s.StartAlpha, s.StartBeta = d.AlphaCoeffs, d.BetaCoeffs
	}
	return s
}

// blackboxStart gives a blackbox deployment without coefficients a start:
// the built-in entry, else 10 ms per step (fit converges from any positive
// start).
func blackboxStart(d deploy.Config, log *slog.Logger) deploy.Config {
	if k, _ := latency.ParseKind(d.LatencyModel); k != latency.KindBlackbox || d.AlphaCoeffs != nil {
		return d
	}
	if a, b, err := latency.BlackboxCoefficients(d.Model, d.GPU, max(d.TP, 1)); err == nil {
		d.AlphaCoeffs, d.BetaCoeffs = a, b
	} else {
		d.AlphaCoeffs, d.BetaCoeffs = []float64{0, 0, 0}, []float64{10000, 20, 100}
		log.Info("no built-in blackbox coefficients for this deployment; starting from 10 ms per step", "model", d.Model, "gpu", d.GPU)
	}
	return d
}

// prepareFitTrace reads one of n traces and sets up its replay: its own
// deployment, session mode, client, warm-up and round trip (each from its
// header unless the flags say), as replay would; it also returns the
// header's workload seed.
func prepareFitTrace(c *ucli.Context, set *fitSettings, in tracev2.Input, n int, stdin io.Reader, log *slog.Logger) (fit.Trace, deploy.Config, *int64, error) {
	itlPath := ""
	if n == 1 {
		itlPath = c.String("itl-data")
	}
	tr, itl, err := readFitInputs(in, itlPath, stdin, log)
	if err != nil {
		return fit.Trace{}, deploy.Config{}, nil, err
	}
	warn := func(m string) { log.Warn(m) }
	dcfg, err := cli.TraceDeployment(c, tr.Name, tr.Header, warn)
	if err != nil {
		return fit.Trace{}, dcfg, nil, err
	}
	mode, err := cli.TraceSessionMode(c, tr.Name, tr.Header, warn)
	if err != nil {
		return fit.Trace{}, dcfg, nil, err
	}
	opts := set.opts
	opts.ClosedLoop = mode == cli.SessionClosedLoop
	var stated *tracev2.Client
	if h := tr.Header; h != nil && h.XExt != nil && h.XExt.Client != nil && !c.Bool("ignore-trace-deployment") {
		stated = h.XExt.Client
		if !c.IsSet("think-time") && stated.ThinkTimeUs > 0 {
			opts.ThinkTimeUs = stated.ThinkTimeUs
		}
	}
	detect := func() (replay.Client, bool, string, error) {
		f, err := replay.DetectClient(replay.RecordRows(tr.Records))
		return f.Client, f.Capped, tr.Name + ": " + f.String(), err
	}
	client, err := cli.TraceClient(c, tr.Name, stated, detect, warn, func(m string) { log.Debug(m) })
	if err != nil {
		return fit.Trace{}, dcfg, nil, err
	}
	if client.Capped() {
		opts.InjectAtArrival = true // the cap decides the sends
	}
	dcfg = blackboxStart(dcfg, log)
	dep, err := deploy.Resolve(dcfg)
	if err != nil {
		return fit.Trace{}, dcfg, nil, err
	}
	ft := fit.Trace{Name: tr.Name, Deploy: dep, Replay: opts, Client: client, RTTUs: c.Int64("network-rtt-us"),
		WarmupRequests: c.Int64("warmup-requests"), Input: fit.Input{Records: tr.Records, ITL: itl}}
	if h := tr.Header; h != nil {
		ft.ContextGrowth = h.SessionContextGrowth
		if ft.WarmupRequests < 0 {
			ft.WarmupRequests = int64(h.WarmUpRequests)
		}
		if ft.RTTUs < 0 && h.Network != nil {
			ft.RTTUs = int64(h.Network.MeasuredRTTMs * 1000)
		}
		if m := h.Mode; m != "" && m != tracev2.ModeReal {
			log.Warn("the trace is not a measured one; fit reproduces a real run", "trace", tr.Name, "mode", m)
		}
	}
	ft.WarmupRequests, ft.RTTUs = max(ft.WarmupRequests, 0), max(ft.RTTUs, 0)
	var seed *int64
	if tr.Header != nil {
		seed = tr.Header.WorkloadSeed
	}
	return ft, dcfg, seed, nil
}

// fitTraceInputs are the traces as the arguments name them: each REAL, or
// the two-file form of --trace-header and --trace-data (one trace).
func fitTraceInputs(c *ucli.Context, args []string) ([]tracev2.Input, error) {
	hp, dp := c.String("trace-header"), c.String("trace-data")
	switch {
	case len(args) > 0 && (hp != "" || dp != ""):
		return nil, cli.Usagef("give the real traces either as arguments or as --trace-header and --trace-data, not both")
	case len(args) > 1 && c.IsSet("itl-data"):
		return nil, cli.Usagef("--itl-data names the ITL file of one trace; with several, each is found beside its trace (NAME.itl.csv)")
	case len(args) > 0:
		var ins []tracev2.Input
		stdin := 0
		for _, a := range args {
			if a == "-" {
				stdin++
			}
			ins = append(ins, tracev2.Input{Path: a})
		}
		if stdin > 1 {
			return nil, cli.Usagef("stdin (-) can be read only once")
		}
		return ins, nil
	case hp == "" && dp == "":
		return nil, cli.Usagef("no real trace: give REAL [REAL...] (trace files, or - for stdin) or --trace-header and --trace-data")
	}
	return []tracev2.Input{{HeaderPath: hp, DataPath: dp}}, nil
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
	var st tracev2.StatusTally
	for i := range tr.Records {
		st.Add(tr.Records[i].Status, tr.Lines[i])
	}
	if w := st.Warning(tr.Name); w != "" {
		log.Warn(w + " (not fitted)")
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
	if len(res.PerTrace) > 1 {
		fmt.Fprintf(&b, "%-24s %9s %9s %9s %9s\n", "trace", "TTFT from", "to", "E2E from", "to")
		for _, p := range res.PerTrace {
			fmt.Fprintf(&b, "%-24s %8.1f%% %8.1f%% %8.1f%% %8.1f%%\n", p.Name, 100*p.Start.TTFTMAPE, 100*p.Fit.TTFTMAPE,
				100*p.Start.E2EMAPE, 100*p.Fit.E2EMAPE)
		}
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
