package main

import (
	"context"
	"fmt"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/des/metrics"
	"servesim/internal/replay"
	"servesim/internal/replay/timeline"
	"servesim/internal/tracev2"
	"servesim/internal/workload"
)

func command() cli.Command {
	flags := []ucli.Flag{
		cli.SeedFlag(),
		cli.FormatFlag("json", "stdout format: json (the summary, keys documented in the README) or text"),
		&ucli.StringFlag{Name: "metrics-out", Usage: "also write the summary JSON to this file"},
		&ucli.StringFlag{Name: "timeline", Usage: "write a Chrome trace-event JSON of the run to this file (open it in ui.perfetto.dev): a process per instance with its steps, KV and batch counters and requests; with a cluster, a router process with routing decisions, rejections and P/D KV transfers; slows the run"},
	}
	// With --trace-output - the trace takes stdout and the summary goes to stderr.
	flags = append(flags, cli.SimOutputFlags()...)
	flags = append(flags, cli.WorkloadFlags()...)
	flags = append(flags, cli.ClientFlags(false)...)
	flags = append(flags, cli.DeploymentFlags()...)
	flags = append(flags, cli.DecisionFlags()...)
	return cli.Command{
		Name:      "run",
		Usage:     "simulate a synthetic workload on a vLLM deployment and print its metrics",
		ArgsUsage: " ",
		Description: `run generates a seeded workload (a preset, a spec YAML, or flags), simulates it
on the described deployment (default: Qwen3-14B on one H100, physics latency
model) and prints aggregate metrics as JSON, or a table with --format text.

Ctrl+C stops injecting: the requests in flight run to their end, the summary of
what was simulated goes to stderr, a --trace-output is kept and marked
interrupted (x_ext.interrupted: in the header, or in the .ext.yaml beside it with
--blis-compatible-header), the other outputs are not written, and the exit code
is 130.

Examples:

   # What would a chatbot at 20 requests/s see on one H100?
   run --workload chatbot --rate 20 --num-requests 2000 --format text

   # The same traffic as a trace, replayed on another deployment:
   run --workload chatbot --rate 20 --trace-output chat
   replay chat.csv --max-num-seqs 64 --format text

   # A load generator that keeps at most 64 requests in flight (observe --max-concurrency):
   run --workload chatbot --rate 40 --num-requests 2000 --client-max-concurrency 64 --format text

   # Through a pipe:
   run --workload summarization --rate 2 --trace-output - | replay - --gpu A100-80

   # Four replicas behind a prefix- and load-aware router, with its decisions:
   run --workload chatbot --rate 80 --num-instances 4 --routing-policy weighted \
       --trace-level decisions --decisions-out decisions.jsonl --format text

   # Prefill/decode disaggregation, as a timeline for ui.perfetto.dev:
   run --workload chatbot --rate 40 --num-requests 200 --prefill-instances 1 \
       --decode-instances 2 --pd-decider always --timeline pd-timeline.json --format text`,
		Flags:       flags,
		Action:      action,
		Subcommands: []cli.Command{sweepCommand()},
	}
}

func action(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	if _, err := cli.Positional(c, 0); err != nil {
		return err
	}
	format := c.String("format")
	if format != "json" && format != "text" {
		return cli.Usagef("--format %q: want json or text", format)
	}
	opts, err := cli.WorkloadOptions(c, stdio)
	if err != nil {
		return err
	}
	wl, err := workload.Resolve(opts)
	if err != nil {
		return err
	}
	client, _, err := cli.ClientFromFlags(c)
	if err != nil {
		return err
	}
	given, err := cli.Deployment(c)
	if err != nil {
		return err
	}
	dep, err := deploy.Resolve(given)
	if err != nil {
		return err
	}
	log.Debug("deployment", "model", dep.Model, "gpu", dep.GPU, "kv_blocks", dep.TotalKVBlocks, "max_model_len", dep.MaxModelLen)

	decisions, err := cli.OpenDecisions(c)
	if err != nil {
		return err
	}
	if decisions != nil {
		defer decisions.Abort()
	}
	tl, err := openTimeline(c.String("timeline"))
	if err != nil {
		return err
	}
	if tl != nil {
		defer tl.out.Abort()
	}
	hdr := header(wl)
	facts := cli.WorkloadClient(wl)
	facts.MaxConcurrency, facts.SendGapUs = client.MaxConcurrency, client.SendGapUs
	setup, err := recordSetup(hdr, given, dep, facts)
	if err != nil {
		return err
	}
	out, err := cli.OpenSimOutputs(c, stdio, hdr, columns(wl))
	if err != nil {
		return err
	}
	defer out.Abort()
	progress := cli.NewProgress(stdio.Err, c.Bool("quiet"), progressTotal(wl), "simulating")
	rcfg := replay.WorkloadConfig(wl, dep)
	rcfg.Client = client
	rcfg.Progress = func(now, done int64) {
		progress.Set(done, fmt.Sprintf("simulating t=%.1fs", float64(now)/1e6))
	}
	if decisions != nil {
		rcfg.Decisions = decisions
	}
	if tl != nil {
		rcfg.Observer = tl.rec
	}
	var sink replay.Sink // the summary alone needs no rows
	if out.Writes() {
		sink = out.Write
	}
	res, err := replay.SimulateWorkload(ctx, rcfg, wl, sink)
	progress.Finish()
	if res.Interrupted {
		if terr := out.Interrupt(hdr); terr != nil {
			log.Warn("finish the interrupted trace", "error", terr)
		}
		return cli.Interrupted(stdio, replay.TextSummary(&res.Summary), res.Summary.InjectedRequests, res.Summary.CompletedRequests, err)
	}
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		log.Warn(w)
	}
	if err := out.Commit(nil); err != nil {
		return err
	}
	if decisions != nil {
		if err := decisions.Commit(); err != nil {
			return err
		}
	}
	if tl != nil {
		if err := tl.out.Commit(); err != nil {
			return err
		}
	}
	if err := writeMetrics(c.String("metrics-out"), &res.Summary, setup); err != nil {
		return err
	}
	summaryTo := stdio.Out
	if c.String("trace-output") == "-" {
		summaryTo = stdio.Err
	}
	if format == "json" {
		return replay.WriteSummarySetup(summaryTo, &res.Summary, setup)
	}
	return replay.WriteSummary(summaryTo, format, &res.Summary)
}

// recordSetup writes the deployment and client run simulates into the
// trace header h (tracev2.md §3: BLIS's server keys, x_ext) and returns
// them for the summary.
func recordSetup(h *tracev2.Header, given deploy.Config, dep *deploy.Resolved, client tracev2.Client) (*replay.Setup, error) {
	if err := deploy.Record(h, given, dep); err != nil {
		return nil, err
	}
	h.XExt.Client = &client
	return &replay.Setup{Deployment: h.Deployment(), Client: client}, nil
}

// writeMetrics is --metrics-out (BLIS's --metrics-path): the summary JSON,
// with the deployment and client simulated as on stdout, in a file visible
// only once whole.
func writeMetrics(path string, sum *metrics.Summary, setup *replay.Setup) error {
	if path == "" {
		return nil
	}
	if path == "-" {
		return cli.Usagef("--metrics-out needs a file (stdout carries the summary)")
	}
	f, err := cli.CreateOutput(path, nil)
	if err != nil {
		return err
	}
	if err := replay.WriteSummarySetup(f, sum, setup); err != nil {
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
	out *cli.Output
	rec *timeline.Recorder
}

func openTimeline(path string) (*timelineOut, error) {
	switch path {
	case "":
		return nil, nil
	case "-":
		return nil, cli.Usagef("--timeline needs a file (stdout carries the summary)")
	}
	f, err := cli.CreateOutput(path, nil)
	if err != nil {
		return nil, err
	}
	return &timelineOut{out: f, rec: timeline.New(f)}, nil
}

func header(wl *workload.Workload) *tracev2.Header {
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
	h.XExt = &tracev2.Ext{Tool: "run", ToolVersion: cli.Version, TimeOrigin: tracev2.OriginRelative, Loop: wl.Loop()}
	return h
}

// columns decides the optional columns up front (tracev2.md §4.3-4.4).
func columns(wl *workload.Workload) tracev2.Columns {
	cols := tracev2.Columns{Instance: true, Preemptions: true}
	for _, cl := range wl.Spec.Clients {
		if cl.SLOTargetUs > 0 {
			cols.SLOTarget = true
		}
	}
	cols.ThinkTime = wl.HasSessions()
	return cols
}
