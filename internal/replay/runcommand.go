package replay

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"servesim/internal/deploy"
	"servesim/internal/des/metrics"
	"servesim/internal/exitcode"
	"servesim/internal/outfile"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

// RunCommand is one simulation of a generated workload as the run command
// runs it. The functions read what the user gave, in this order, each
// only once the previous one succeeded: the workload, the client, the
// deployment, the routing-decision log.
type RunCommand struct {
	Format        string // json (the summary with the setup) or text
	Workload      func() (workload.Options, error)
	Client        func() (Client, error)
	Deployment    func() (deploy.Config, error)
	OpenDecisions func() (*outfile.Output, error) // nil when not asked
	// CounterfactualK is --counterfactual-k (checked by OpenDecisions).
	CounterfactualK int
	MetricsOut      string // --metrics-out
	// ResultsPath is --results-path (BLIS's): every request's SimResult, a
	// JSON array in request_id order as replay writes it; "-" is stdout,
	// and the summary then goes to stderr.
	ResultsPath  string
	SLO          string  // --slo (FlagSLOTargets): replaces the workload spec's goodput targets
	Fitness      string  // --fitness-weights (FlagFitness)
	TimeScale    float64 // --time-scale: arrival times × this, with TimeScaleSet
	TimeScaleSet bool
	Timeline     string // --timeline
	FleetHTML    string // --fleet-html: the fleet over time as a page
	// NewTimeline records the timeline into the file (timeline.New).
	NewTimeline func(io.Writer) Observer
	Sim         SimOutputPaths
	ToolVersion string // recorded in the trace's header
	// Inputs and Outputs are the files the command line names besides the
	// outputs above (--deployment, --workload-spec, --decisions-out), for
	// outfile.Check.
	Inputs, Outputs []outfile.Named
	Stdout, Stderr  io.Writer
	Log             *slog.Logger
	NewProgress     func(total int64, desc string) Progress // may be nil
}

// ExecuteRun generates the workload, simulates it on the deployment and
// writes the summary and the outputs asked for.
func ExecuteRun(ctx context.Context, cmd RunCommand) error {
	if cmd.Format != "json" && cmd.Format != "text" {
		return exitcode.Usagef("--format %q: want json or text", cmd.Format)
	}
	if cmd.ResultsPath == "-" && cmd.Sim.TraceOutput == "-" {
		return exitcode.Usagef("--results-path and --trace-output both ask for stdout; give one of them a file")
	}
	sloTargets, err := FlagSLOTargets(cmd.SLO)
	if err != nil {
		return err
	}
	fitness, err := FlagFitness(cmd.Fitness)
	if err != nil {
		return err
	}
	if s := cmd.TimeScale; cmd.TimeScaleSet && !(s > 0 && s <= 1e6) {
		return exitcode.Usagef("--time-scale %v: must be > 0 (and at most 1e6)", s)
	}
	outs, err := cmd.Sim.files()
	if err != nil {
		return err
	}
	outs = append(outs, outfile.Named{What: "--metrics-out", Path: cmd.MetricsOut}, outfile.Named{What: "--results-path", Path: cmd.ResultsPath}, outfile.Named{What: "--timeline", Path: cmd.Timeline},
		outfile.Named{What: "--fleet-html", Path: cmd.FleetHTML})
	if err := outfile.Check(append(outs, cmd.Outputs...), cmd.Inputs); err != nil {
		return err
	}
	wl, client, given, dep, err := cmd.resolve()
	if err != nil {
		return err
	}
	if cmd.FleetHTML != "" && dep.ClusterConfig.Fleet == nil {
		return exitcode.Usagef("--fleet-html draws a fleet: give --fleet-file")
	}
	cmd.Log.Debug("deployment", "model", dep.Model, "gpu", dep.GPU, "kv_blocks", dep.TotalKVBlocks, "max_model_len", dep.MaxModelLen)
	var decisions *outfile.Output
	if cmd.OpenDecisions != nil {
		if decisions, err = cmd.OpenDecisions(); err != nil {
			return err
		}
	}
	if decisions != nil {
		defer decisions.Abort()
	}
	tl, err := openTimeline(cmd.Timeline, cmd.NewTimeline)
	if err != nil {
		return err
	}
	if tl != nil {
		defer tl.out.Abort()
	}
	hdr := generatedHeader(wl, cmd.ToolVersion)
	facts := wl.Client()
	facts.MaxConcurrency, facts.SendGapUs = client.MaxConcurrency, client.SendGapUs
	setup, err := recordSetup(hdr, given, dep, facts)
	if err != nil {
		return err
	}
	out, err := OpenSimOutputs(cmd.Sim, cmd.Stdout, hdr, generatedColumns(wl))
	if err != nil {
		return err
	}
	defer out.Abort()
	results, err := openRunResults(cmd.ResultsPath, cmd.Stdout)
	if err != nil {
		return err
	}
	defer results.abort()
	rcfg := WorkloadConfig(wl, dep)
	rcfg.Client = client
	rcfg.Fitness = fitness
	if cmd.TimeScaleSet {
		rcfg.TimeScale = cmd.TimeScale
	}
	if sloTargets != nil {
		rcfg.SLOTargets = sloTargets
	}
	var progress Progress
	if cmd.NewProgress != nil {
		progress = cmd.NewProgress(progressTotal(wl), "simulating")
		rcfg.Progress = func(now, done int64) {
			progress.Set(done, fmt.Sprintf("simulating t=%.1fs", float64(now)/1e6))
		}
	}
	if decisions != nil {
		rcfg.Decisions = decisions
	}
	rcfg.CounterfactualK = cmd.CounterfactualK
	if tl != nil {
		rcfg.Observer = tl.rec
	}
	var sink Sink // the summary alone needs no rows
	switch {
	case results != nil:
		sink = func(rec *tracev2.Record, res *tracev2.SimResult) error {
			if err := results.settle(rec, res); err != nil {
				return err
			}
			return out.Write(rec, res)
		}
	case out.Writes():
		sink = out.Write
	}
	res, err := SimulateWorkload(ctx, rcfg, wl, sink)
	if progress != nil {
		progress.Finish()
	}
	if res.Interrupted {
		if terr := out.Interrupt(hdr); terr != nil {
			cmd.Log.Warn("finish the interrupted trace", "error", terr)
		}
		return Interrupted(cmd.Stderr, &res.Summary, err)
	}
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		cmd.Log.Warn(w)
	}
	if err := results.commit(); err != nil {
		return err
	}
	return cmd.finish(&res, setup, out, decisions, tl.output())
}

// resolve reads what the command line describes: the workload, the
// simulated client, and the deployment as given and as resolved.
func (cmd RunCommand) resolve() (*workload.Workload, Client, deploy.Config, *deploy.Resolved, error) {
	opts, err := cmd.Workload()
	if err != nil {
		return nil, Client{}, deploy.Config{}, nil, err
	}
	wl, err := workload.Resolve(opts)
	if err != nil {
		return nil, Client{}, deploy.Config{}, nil, err
	}
	client, err := cmd.Client()
	if err != nil {
		return nil, Client{}, deploy.Config{}, nil, err
	}
	given, err := cmd.Deployment()
	if err != nil {
		return nil, Client{}, deploy.Config{}, nil, err
	}
	dep, err := deploy.Resolve(given)
	if err != nil {
		return nil, Client{}, deploy.Config{}, nil, err
	}
	return wl, client, given, dep, nil
}

// finish commits a finished run's outputs (the trace and results, then
// the decision log and the timeline), writes its metrics file and prints
// its summary: on stderr when the trace or the results took stdout.
func (cmd RunCommand) finish(res *Outcome, setup *Setup, out *SimOutputs, files ...*outfile.Output) error {
	if err := out.Commit(nil); err != nil {
		return err
	}
	for _, o := range files {
		if o != nil {
			if err := o.Commit(); err != nil {
				return err
			}
		}
	}
	if err := writeMetrics(cmd.MetricsOut, &res.Summary, setup); err != nil {
		return err
	}
	if err := writeFleetHTML(cmd.FleetHTML, &res.Summary); err != nil {
		return err
	}
	summaryTo := cmd.Stdout
	if cmd.Sim.TraceOutput == "-" || cmd.ResultsPath == "-" {
		summaryTo = cmd.Stderr
	}
	if cmd.Format == "json" {
		return WriteSummarySetup(summaryTo, &res.Summary, setup)
	}
	return WriteSummary(summaryTo, cmd.Format, &res.Summary)
}

// recordSetup writes the deployment and client run simulates into the
// trace header h (docs/tracev2.md: BLIS's server keys, x_ext) and returns
// them for the summary.
func recordSetup(h *tracev2.Header, given deploy.Config, dep *deploy.Resolved, client tracev2.Client) (*Setup, error) {
	if err := deploy.Record(h, given, dep); err != nil {
		return nil, err
	}
	h.XExt.Client = &client
	return &Setup{Deployment: h.Deployment(), Client: client}, nil
}

// writeMetrics is --metrics-out (BLIS's --metrics-path): the summary JSON,
// with the deployment and client simulated as on stdout, in a file visible
// only once whole.
func writeMetrics(path string, sum *metrics.Summary, setup *Setup) error {
	if path == "" {
		return nil
	}
	if path == "-" {
		return exitcode.Usagef("--metrics-out needs a file (stdout carries the summary)")
	}
	f, err := outfile.Open(path, nil)
	if err != nil {
		return err
	}
	if err := WriteSummarySetup(f, sum, setup); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// progressTotal is the progress bar's length: the request count, so that
// the bar shows a percentage and an ETA as replay's does; -1 (a spinner)
// only for a workload bounded by its horizon alone.
func progressTotal(wl *workload.Workload) int64 {
	if n := wl.Spec.NumRequests; n > 0 {
		return n
	}
	return -1
}

// timelineOut is --timeline: the recorder and the file it fills, made
// visible only after a successful run.
type timelineOut struct {
	out *outfile.Output
	rec Observer
}

func (t *timelineOut) output() *outfile.Output {
	if t == nil {
		return nil
	}
	return t.out
}

func openTimeline(path string, record func(io.Writer) Observer) (*timelineOut, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		return nil, exitcode.Usagef("--timeline needs a file (stdout carries the summary)")
	}
	f, err := outfile.Open(path, nil)
	if err != nil {
		return nil, err
	}
	return &timelineOut{out: f, rec: record(f)}, nil
}

// generatedHeader is the header of the trace a run writes.
func generatedHeader(wl *workload.Workload, version string) *tracev2.Header {
	h := tracev2.DefaultHeader()
	h.Mode = tracev2.ModeGenerated
	seed := wl.Spec.Seed
	h.WorkloadSeed = &seed
	h.WorkloadSpec = wl.Name
	h.SessionContextGrowth = wl.ContextGrowth()
	for class, t := range wl.Spec.GoodputSLOTargets {
		if h.GoodputSLOTargets == nil {
			h.GoodputSLOTargets = map[string]tracev2.SLOTargets{}
		}
		h.GoodputSLOTargets[class] = tracev2.SLOTargets{TTFTMs: t.TTFTMs, ITLMs: t.ITLMs, E2EMs: t.E2EMs}
	}
	h.XExt = &tracev2.Ext{Tool: "run", ToolVersion: version, TimeOrigin: tracev2.OriginRelative, Loop: wl.Loop()}
	return h
}

// generatedColumns decides the optional columns up front
// (docs/tracev2.md).
func generatedColumns(wl *workload.Workload) tracev2.Columns {
	cols := tracev2.Columns{Instance: true, Preemptions: true}
	for _, cl := range wl.Spec.Clients {
		if cl.SLOTargetUs > 0 {
			cols.SLOTarget = true
		}
	}
	cols.ThinkTime = wl.HasSessions()
	return cols
}

// runResults is run's --results-path: the SimResults of the generated
// requests in request_id order. A run's ids are dense from 0, handed out
// as requests are generated, so the list of ids that may settle is every
// id up to the largest seen.
type runResults struct {
	out *outfile.Output
	w   *ResultWriter
	ids []int64
}

func openRunResults(path string, stdout io.Writer) (*runResults, error) {
	if path == "" {
		return nil, nil
	}
	f, err := outfile.Open(path, stdout)
	if err != nil {
		return nil, err
	}
	r := &runResults{out: f}
	r.w = NewResultWriter(f, tracev2.SimResultArray, func() []int64 { return r.ids })
	return r, nil
}

func (r *runResults) settle(rec *tracev2.Record, res *tracev2.SimResult) error {
	for id := int64(len(r.ids)); id <= rec.RequestID; id++ {
		r.ids = append(r.ids, id)
	}
	return r.w.Settle(rec.RequestID, res)
}

func (r *runResults) commit() error {
	if r == nil {
		return nil
	}
	if err := r.w.Close(); err != nil {
		return err
	}
	err := r.out.Commit()
	r.out = nil
	return err
}

func (r *runResults) abort() {
	if r == nil || r.out == nil {
		return
	}
	r.w.Stop()
	r.out.Abort()
	r.out = nil
}
