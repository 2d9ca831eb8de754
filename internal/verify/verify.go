package verify

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"

	"servesim/internal/calibrate"
	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/fit"
	"servesim/internal/flagspec"
	"servesim/internal/infile"
	"servesim/internal/live"
	"servesim/internal/replay"
	"servesim/internal/report"
	"servesim/internal/sweep"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// Config is one verification, its flags given but not yet checked.
type Config struct {
	Plan string // the sweep document (run sweep --find max-rate --format json)
	// Live is the server and the client, as observe's flags give them;
	// the rates, the SLO and the outputs of its sweep are set here.
	Live live.Config
	// Workload and Deploy are the workload and deployment flags given
	// (the plan's own keys fill in what they leave out).
	Workload, Deploy flagspec.Values
	// Probes is the number of rates probed (2 or 3), Spread their distance
	// from the predicted max rate (0.3: 0.7×, 1× and 1.3×), Requests the
	// requests of each probe.
	Probes   int
	Spread   float64
	Requests int64
	Prefix   string // the probes' traces PREFIX-<k>-<rate>.csv and their sweep PREFIX.probes.json
	Format   string // text, json, markdown or html
	// MaxIterations bounds the fit's replays.
	MaxIterations int
}

// Formats are the page's formats.
var Formats = []string{"text", "json", "markdown", "html"}

// check refuses a bad setting before anything is read.
func (c *Config) check() error {
	switch {
	case c.Probes < 2 || c.Probes > 3:
		return exitcode.Usagef("--probes %d: want 2 or 3", c.Probes)
	case !(c.Spread > 0 && c.Spread < 1):
		return exitcode.Usagef("--spread %v: want a share in (0, 1), e.g. 0.3 for 0.7×, 1× and 1.3× the predicted rate", c.Spread)
	case c.Requests < 10 || c.Requests > 100000:
		return exitcode.Usagef("--probe-requests %d: want 10 to 100000", c.Requests)
	case c.MaxIterations < 1 || c.MaxIterations > 1000:
		return exitcode.Usagef("--max-iterations %d: want 1 to 1000", c.MaxIterations)
	case c.Prefix == "" || c.Prefix == "-":
		return exitcode.Usagef("--trace-output %q: the probes' traces need a file prefix", c.Prefix)
	}
	for _, f := range Formats {
		if c.Format == f {
			return nil
		}
	}
	return exitcode.Usagef("--format %q: want %s", c.Format, strings.Join(Formats, ", "))
}

// probeRates are the rates probed around the predicted max rate r.
func (c *Config) probeRates(r float64) []float64 {
	round := func(x float64) float64 { return math.Round(x*100) / 100 }
	if c.Probes == 2 {
		return []float64{round(r * (1 - c.Spread/2)), round(r * (1 + c.Spread/2))}
	}
	return []float64{round(r * (1 - c.Spread)), round(r), round(r * (1 + c.Spread))}
}

// Run verifies the plan: everything is checked (the plan, the flags, the
// server's model) before the first probe is sent. The page goes to
// stdio.Out.
func Run(ctx context.Context, c Config, stdio live.IO) error {
	if err := c.check(); err != nil {
		return err
	}
	if stdio.Log == nil {
		stdio.Log = slog.New(slog.DiscardHandler)
	}
	p, err := readPlan(c.Plan, c.Deploy)
	if err != nil {
		return err
	}
	dep, err := deploy.FromFlags(p.deployed)
	if err != nil {
		return err
	}
	planned, probe, err := p.workloads(c.Workload, c.Requests, func(v flagspec.Values) (workload.Options, error) {
		return workload.FromFlags(v, stdio.In, "-")
	})
	if err != nil {
		return err
	}
	if _, err := workload.Resolve(planned); err != nil {
		return err
	}
	served, err := live.ServedModels(ctx, c.Live)
	if err != nil {
		return err
	}
	if c.Live.Model, err = servedName(served, c.Live.Model, dep.Model); err != nil {
		return err
	}
	rates := c.probeRates(p.answer.MaxRateRPS)
	probes, err := c.probe(ctx, p, probe, rates, stdio)
	if err != nil {
		return err
	}
	fitted, err := calibrate.FitTraces(ctx, calibrate.Fit{
		Resolver: &replay.FlagResolver{Flags: p.deployed, GivenMode: replay.SessionFixed},
		Settings: fit.Settings{WarmupRequests: -1, NetworkRTTUs: -1},
		Config:   fit.Config{MaxIterations: c.MaxIterations},
		Log:      stdio.Log, Stdin: stdio.In,
	}, probeTraces(c.Prefix, rates))
	if err != nil {
		return err
	}
	corrected := dep
	corrected.LatencyModel, corrected.AlphaCoeffs, corrected.BetaCoeffs = fitted.Deploy.LatencyModel, fitted.Result.Alpha, fitted.Result.Beta
	again, err := rerun(ctx, p, planned, corrected, stdio)
	if err != nil {
		return err
	}
	return write(stdio.Out, c.Format, newResult(c, p, dep, probes, fitted, again))
}

// probe runs the probes as observe --rates does and reads their rows back.
func (c *Config) probe(ctx context.Context, p *plan, wl workload.Options, rates []float64, stdio live.IO) (*sweep.Doc, error) {
	lc := c.Live
	var text []string
	for _, r := range rates {
		text = append(text, strconv.FormatFloat(r, 'f', -1, 64))
	}
	lc.Rates, lc.SLO, lc.TraceOutput, lc.SweepOutput = strings.Join(text, ","), p.doc.SLO, c.Prefix, c.Prefix+".probes.json"
	lc.Workload = func() (workload.Options, error) { return wl, nil }
	lc.RecordITL = true
	quiet := stdio
	quiet.Out = stdio.Err // the probes' table is a log line of this run, not its page
	if err := live.Run(ctx, lc, quiet); err != nil && exitcode.Of(err) != exitcode.Assertion {
		return nil, err
	}
	data, err := readFile(lc.SweepOutput)
	if err != nil {
		return nil, err
	}
	return sweep.DecodeWholeDoc(lc.SweepOutput, data)
}

// probeTraces are the trace files observe wrote for the probes.
func probeTraces(prefix string, rates []float64) []string {
	var out []string
	for k, r := range rates {
		out = append(out, fmt.Sprintf("%s-%d-%s.csv", prefix, k, strconv.FormatFloat(r, 'f', -1, 64)))
	}
	return out
}

// rerun searches the plan's max rate again, on the fitted deployment, as
// run sweep does.
func rerun(ctx context.Context, p *plan, wl workload.Options, dep deploy.Config, stdio live.IO) (*sweep.Doc, error) {
	v := flagspec.Values{sweep.FlagFind: sweep.FindMaxRate, sweep.FlagSLO: p.doc.SLO, sweep.FlagFormat: "json", sweep.FlagOutput: "-"}
	if p.doc.Precision > 0 {
		v[sweep.FlagPrecision] = p.doc.Precision
	}
	opts, err := sweep.Prepare(v, replay.RateKey)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = replay.RunSweep(ctx, replay.WorkloadSweep{Sweep: opts, Workload: wl, Deploy: dep, Pages: report.SweepPages{},
		WorkloadFacts: func(w *workload.Workload) tracev2.Client { return w.Client() }, Stdout: &out, Log: stdio.Log})
	if err != nil && exitcode.Of(err) != exitcode.Assertion {
		return nil, err
	}
	return sweep.DecodeWholeDoc("the corrected plan", out.Bytes())
}

func readFile(path string) ([]byte, error) {
	data, err := infile.ReadFile(path, sweep.MaxDocBytes)
	if err != nil {
		return nil, fmt.Errorf("the probes' sweep: %w", err)
	}
	return data, nil
}
