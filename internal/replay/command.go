package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"servesim/internal/deploy"
	"servesim/internal/exitcode"
	"servesim/internal/outfile"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
)

// Command is one replay of a trace as the replay command runs it: the
// trace, how its rows become requests, what the replay is simulated on
// and what it writes. Usage errors name the command's flags.
type Command struct {
	Input input.Config // the trace; Execute decides Stream and Log
	Trace TraceFlags
	// Format is json, jsonl (SimResults on stdout unless ResultsPath) or
	// text (the summary table).
	Format      string
	ResultsPath string // --results-path; "-" is stdout
	// Interval also writes the SimResults of the runs at step-time scales
	// 1 ± 1.645σ beside ResultsPath (replayInterval).
	Interval   bool
	MetricsOut string // --metrics-out: the summary with the setup
	Timeline   string // --timeline: a Chrome trace-event JSON
	FleetHTML  string // --fleet-html: the fleet over time as a page
	// NewTimeline records the timeline into the file (timeline.New).
	NewTimeline func(io.Writer) Observer
	Sim         SimOutputPaths
	// CheckDeployment validates the deployment flags and file before the
	// trace is read; Resolver decides the deployment and the client once
	// its header is known.
	CheckDeployment func() error
	Resolver        Resolver
	// OpenDecisions opens the routing-decision log (nil when not asked);
	// it may be nil.
	OpenDecisions func() (*outfile.Output, error)
	// CounterfactualK is --counterfactual-k (checked by OpenDecisions).
	CounterfactualK int
	ToolVersion     string // recorded in the replayed trace's header
	// Inputs and Outputs are the files the command line names besides
	// the trace and the outputs above (--deployment, --decisions-out),
	// for outfile.Check.
	Inputs, Outputs []outfile.Named
	Stdout          io.Writer
	Stderr          io.Writer // the interrupted summary
	Log             *slog.Logger
	// NewProgress shows the progress of total rows (-1: unknown); it may
	// be nil.
	NewProgress func(total int64, desc string) Progress
}

// TraceFlags say how a trace's rows become requests; the Set fields say
// whether the flag was given (else the trace's own value may be taken).
type TraceFlags struct {
	InjectAt              string // send or arrival
	InjectAtSet           bool
	SessionMode           string // fixed or closed-loop
	ThinkTime             time.Duration
	ThinkTimeSet          bool
	Horizon               time.Duration
	Rate                  float64 // requests/s, with RateSet
	RateSet               bool
	TimeScale             float64 // multiplies the gaps between injections, with TimeScaleSet; not with Rate
	TimeScaleSet          bool
	HashBlockTokens       int
	Seed                  int64 // with SeedSet, else the trace's workload_seed
	SeedSet               bool
	SkipFailed            bool
	IgnoreTraceDeployment bool
	// SLO is --slo (FlagSLOTargets); it replaces the trace header's goodput
	// targets.
	SLO string
	// Fitness is --fitness-weights (FlagFitness).
	Fitness string
}

// Progress is a progress display; a nil one is not called.
type Progress interface {
	Set(n int64, desc string)
	Finish()
}

// Execute is the replay: validate the settings and the deployment, read
// and check the whole trace, then open the outputs, simulate, and commit
// them. An imported trace that comes in injection order is read once, as
// the simulation takes its rows (streamed.go).
func Execute(ctx context.Context, cmd Command) (err error) {
	j, err := cmd.settings()
	if err != nil {
		return err
	}
	if err := cmd.checkFiles(); err != nil {
		return err
	}
	if err := cmd.CheckDeployment(); err != nil {
		return err // a bad flag or --deployment file, before the trace is read
	}
	j.start = time.Now()
	cfg := cmd.Input
	cfg.Stream, cfg.Log = true, cmd.Log
	if !cmd.Trace.IgnoreTraceDeployment {
		cfg.DeploymentKey = deploy.CheckTraceKey // a bad value refused at its place in the header
	}
	in, err := input.Open(cfg)
	if err != nil {
		return err
	}
	defer in.Close()
	defer func() { err = in.Named(err) }()
	j.in, j.log = in, in.Logger(cmd.Log)
	if err := j.setUp(); err != nil {
		return err
	}
	if cmd.FleetHTML != "" && j.dep.ClusterConfig.Fleet == nil {
		return exitcode.Usagef("--fleet-html draws a fleet: give --fleet-file")
	}
	j.opts.Ordinals = cmd.Sim.TraceOutput != ""
	if in.Stream != nil {
		// A two-file --trace-output is written in place as the rows come:
		// a bad row found late would leave it half written.
		if !j.opts.ClosedLoop && !cmd.Trace.RateSet && !cmd.Trace.TimeScaleSet && !cmd.Interval && (cmd.Sim.TraceOutput == "" || cmd.Sim.TraceOutput == "-") {
			if done, err := j.replayStreamed(ctx); done {
				return err
			}
		}
		if err := in.Spool(); err != nil {
			return err
		}
	}
	tr, err := NewTrace(in.Rows, j.opts)
	if err != nil {
		if located := (*tracev2.Error)(nil); errors.As(err, &located) {
			return err // it names its file already
		}
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	defer tr.Close()
	if err := cmd.Trace.pace(tr); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	if err := j.simulate(ctx, tr, nil); err != nil || !cmd.Interval {
		return err
	}
	return j.replayInterval(ctx)
}

// job is a replay under way: the command, its validated settings, the
// trace and what it is simulated on.
type job struct {
	cmd         *Command
	stdout      io.Writer // the command's, or held back while a streamed trace is read
	summaryTo   io.Writer // where the text summary goes
	resultsPath string    // "" = no SimResult file (text format), "-" = stdout
	opts        TraceOptions
	horizonUs   int64
	in          *input.Trace
	log         *slog.Logger
	dep         *deploy.Resolved
	client      Client
	header      *tracev2.Header // of the replayed trace
	setup       *Setup          // what the replay ran on, for --metrics-out
	start       time.Time
}

// simulate replays tr, writes the outputs and commits them. release, if
// set, is called after the simulation (interrupted or not) and before
// anything is committed or printed: a streamed replay reads the rest of
// its trace there and lets its held stdout go.
func (j *job) simulate(ctx context.Context, tr *Trace, release func(interrupted bool) error) error {
	j.log.Debug("trace", "input", j.in.Describe(), "read_s", fmt.Sprintf("%.2f", time.Since(j.start).Seconds()), "streamed", j.in.Stream != nil)
	out, err := j.openOutputs(tr)
	if err != nil {
		return err
	}
	defer out.abort()
	total := int64(tr.Len())
	if j.in.Stream != nil {
		total = -1 // not known before the trace is read
	}
	cfg := j.config()
	var progress Progress
	if j.cmd.NewProgress != nil {
		progress = j.cmd.NewProgress(total, "replaying")
		cfg.Progress = func(now, done int64) {
			progress.Set(done, fmt.Sprintf("replaying t=%.1fs", float64(now)/1e6))
		}
	}
	if out.timeline != nil {
		cfg.Observer = out.timeline
	}
	if out.decOut != nil {
		cfg.Decisions = out.decOut
	}
	cfg.CounterfactualK = j.cmd.CounterfactualK
	simStart := time.Now()
	res, err := Simulate(ctx, cfg, tr, tr.FollowUps(), out.write)
	if progress != nil {
		progress.Finish()
	}
	if (err == nil || res.Interrupted) && release != nil {
		if out.results != nil {
			out.results.Sync() // it writes on its own goroutine
		}
		if err := release(res.Interrupted); err != nil {
			return err
		}
	}
	if res.Interrupted {
		if terr := out.sim.Interrupt(replayedHeader(j.in.Header, j.cmd.ToolVersion)); terr != nil {
			j.log.Warn("finish the interrupted trace", "error", terr)
		}
		return Interrupted(j.cmd.Stderr, &res.Summary, err)
	}
	if err != nil {
		return err
	}
	if err := tr.Close(); err != nil {
		return err
	}
	wall := time.Since(simStart).Seconds()
	for _, w := range append(tr.Warnings(), res.Warnings...) {
		j.log.Warn(w)
	}
	if err := out.commit(&res.Summary); err != nil {
		return err
	}
	j.log.Info("replayed", "rows", tr.Len(), "skipped", tr.Skipped(), "injected", res.Summary.InjectedRequests,
		"completed", res.Summary.CompletedRequests, "sim_wall_s", fmt.Sprintf("%.2f", wall),
		"requests_per_s", fmt.Sprintf("%.0f", float64(res.Summary.InjectedRequests)/max(wall, 1e-9)))
	if j.cmd.Format == "text" {
		return WriteSummary(j.summaryTo, "text", &res.Summary)
	}
	return nil
}

// config is the simulation's configuration: the seed (the flag's, else
// the trace's), its session context growth and goodput targets, the
// horizon, the hash block size, the deployment and the client.
func (j *job) config() Config {
	cfg := traceConfig(&j.cmd.Trace, j.in, j.horizonUs)
	cfg.Deploy, cfg.Client = j.dep, j.client
	return cfg
}

// traceConfig is the configuration of the trace in, but for the
// deployment, the client and progress.
func traceConfig(f *TraceFlags, in *input.Trace, horizonUs int64) Config {
	seed := f.Seed
	if !f.SeedSet && in.Header.WorkloadSeed != nil {
		seed = *in.Header.WorkloadSeed
	}
	targets := SLOTargets(in.Header.GoodputSLOTargets)
	if given, err := FlagSLOTargets(f.SLO); err == nil && given != nil { // validated by options
		targets = given
	}
	fitness, _ := FlagFitness(f.Fitness) // validated by options
	return Config{
		Seed:            seed,
		ContextGrowth:   in.Header.SessionContextGrowth,
		HorizonUs:       horizonUs,
		SLOTargets:      targets,
		Fitness:         fitness,
		HashBlockTokens: f.HashBlockTokens,
		UniqueIDs:       in.Unique,
	}
}

// checkFiles refuses, before anything is read, outputs that cannot be
// written or would replace an input (outfile.Check).
func (cmd *Command) checkFiles() error {
	outs, err := cmd.Sim.files()
	if err != nil {
		return err
	}
	outs = append(outs, outfile.Named{What: "--results-path", Path: cmd.ResultsPath}, outfile.Named{What: "--metrics-out", Path: cmd.MetricsOut},
		outfile.Named{What: "--timeline", Path: cmd.Timeline}, outfile.Named{What: "--fleet-html", Path: cmd.FleetHTML})
	return outfile.Check(append(outs, cmd.Outputs...), append(cmd.Input.Files(), cmd.Inputs...))
}
