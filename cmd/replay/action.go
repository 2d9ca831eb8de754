package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/input"
)

// settings are the validated flags that are not the deployment's.
type settings struct {
	format      string // json, jsonl, text
	resultsPath string // "" = no SimResult file (text format), "-" = stdout
	metricsOut  string
	timeline    string
	traceOut    string
	summaryTo   io.Writer // where the text summary goes
	opts        replay.TraceOptions
	horizonUs   int64
	header      *tracev2.Header // of the replayed trace
	setup       *replay.Setup   // what the replay ran on, for --metrics-out
}

// traceSettings validates the flags that say how the trace's rows become
// requests (the session mode is checked here and decided by traceSetup,
// as the trace's client may set it), and --horizon and
// --hash-block-tokens.
func traceSettings(c *ucli.Context) (opts replay.TraceOptions, horizonUs int64, err error) {
	switch c.String("inject-at") {
	case "send":
	case "arrival":
		opts.InjectAtArrival = true
	default:
		return opts, 0, cli.Usagef("--inject-at %q: want send or arrival", c.String("inject-at"))
	}
	switch c.String("session-mode") {
	case cli.SessionFixed, cli.SessionClosedLoop:
	default:
		return opts, 0, cli.Usagef("--session-mode %q: want fixed or closed-loop", c.String("session-mode"))
	}
	if d := c.Duration("think-time"); d < 0 {
		return opts, 0, cli.Usagef("--think-time %v is negative", d)
	} else {
		opts.ThinkTimeUs = d.Microseconds()
	}
	if d := c.Duration("horizon"); d < 0 {
		return opts, 0, cli.Usagef("--horizon %v is negative", d)
	} else {
		horizonUs = d.Microseconds()
	}
	if c.Int("hash-block-tokens") <= 0 {
		return opts, 0, cli.Usagef("--hash-block-tokens %d must be positive", c.Int("hash-block-tokens"))
	}
	if n := c.Int("hash-block-tokens"); n > tracev2.MaxTokens {
		return opts, 0, cli.Usagef("--hash-block-tokens %d exceeds %d, the largest prompt a trace may hold", n, tracev2.MaxTokens)
	}
	opts.SkipFailed = c.Bool("skip-failed")
	return opts, horizonUs, nil
}

// simConfig is the replay's configuration of the trace in, but for the
// deployment, the client and progress: the seed (--seed, else the
// trace's), its session context growth and goodput targets, the horizon
// and the hash block size.
func simConfig(c *ucli.Context, in *input.Trace, horizonUs int64) replay.Config {
	seed := c.Int64("seed")
	if !c.IsSet("seed") && in.Header.WorkloadSeed != nil {
		seed = *in.Header.WorkloadSeed
	}
	return replay.Config{
		Seed:            seed,
		ContextGrowth:   in.Header.SessionContextGrowth,
		HorizonUs:       horizonUs,
		SLOTargets:      replay.SLOTargets(in.Header.GoodputSLOTargets),
		HashBlockTokens: c.Int("hash-block-tokens"),
		UniqueIDs:       in.Unique,
	}
}

// parseSettings validates the flags before anything is read or written.
func parseSettings(c *ucli.Context, stdio cli.IO) (*settings, error) {
	s := &settings{format: c.String("format"), resultsPath: c.String("results-path"),
		metricsOut: c.String("metrics-out"), timeline: c.String("timeline"), traceOut: c.String("trace-output"),
		summaryTo: stdio.Out}
	switch s.format {
	case "json", "jsonl":
		if s.resultsPath == "" {
			s.resultsPath = "-"
		}
	case "text":
	default:
		return nil, cli.Usagef("--format %q: want json, jsonl or text", s.format)
	}
	var err error
	if s.opts, s.horizonUs, err = traceSettings(c); err != nil {
		return nil, err
	}
	// stdout carries one data stream; the text summary gives way to stderr.
	var claims []string
	for _, o := range []struct{ flag, path string }{
		{"--results-path", s.resultsPath}, {"--metrics-out", s.metricsOut}, {"--timeline", s.timeline},
		{"--trace-output", s.traceOut}, {"--requests-out", c.String("requests-out")},
	} {
		if o.path == "-" {
			claims = append(claims, o.flag)
		}
	}
	if len(claims) > 1 {
		note := ""
		if claims[0] == "--results-path" && c.String("results-path") == "" {
			note = " (--results-path defaults to stdout with --format json or jsonl)"
		}
		return nil, cli.Usagef("%s all ask for stdout; give all but one of them a file%s", claimList(claims), note)
	}
	if len(claims) == 1 && s.format == "text" {
		s.summaryTo = stdio.Err
	}
	return s, nil
}

func claimList(c []string) string {
	out := c[0]
	for i := 1; i < len(c); i++ {
		sep := ", "
		if i == len(c)-1 {
			sep = " and "
		}
		out += sep + c[i]
	}
	return out
}

// action is replay: validate the flags and the deployment, read and check
// the whole trace, then open the outputs, simulate, and commit them. An
// imported trace that comes in injection order is read once, as the
// simulation takes its rows (replayStreamed).
func action(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) (err error) {
	set, err := parseSettings(c, stdio)
	if err != nil {
		return err
	}
	if _, err := cli.Deployment(c); err != nil {
		return err // a bad flag or --deployment file, before the trace is read
	}
	start := time.Now()
	in, err := loadInput(c, stdio, log, true)
	if err != nil {
		return err
	}
	defer in.Close()
	defer func() { err = in.Named(err) }()
	log = in.Logger(log)
	dep, client, err := setUp(c, set, in, log)
	if err != nil {
		return err
	}
	set.opts.Ordinals = set.traceOut != ""
	if in.Stream != nil {
		// A two-file --trace-output is written in place as the rows come:
		// a bad row found late would leave it half written.
		if !set.opts.ClosedLoop && !c.IsSet("rate") && (set.traceOut == "" || set.traceOut == "-") {
			if done, err := replayStreamed(ctx, c, stdio, log, set, in, dep, client, start); done {
				return err
			}
		}
		if err := in.Spool(); err != nil {
			return err
		}
	}
	tr, err := replay.NewTrace(in.Rows, set.opts)
	if err != nil {
		if located := (*tracev2.Error)(nil); errors.As(err, &located) {
			return err // it names its file already
		}
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	defer tr.Close()
	if c.IsSet("rate") {
		if err := tr.SetRate(c.Float64("rate")); err != nil {
			return fmt.Errorf("%s: --rate: %w", in.Name, err)
		}
	}
	return simulate(ctx, c, stdio, log, set, in, dep, client, tr, start, nil)
}

// simulate replays tr, writes the outputs and commits them. release, if
// set, is called after the simulation (interrupted or not) and before
// anything is committed or printed: a streamed replay reads the rest of
// its trace there and lets its held stdout go.
func simulate(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger, set *settings, in *input.Trace,
	dep *deploy.Resolved, client replay.Client, tr *replay.Trace, start time.Time, release func(interrupted bool) error) error {
	log.Debug("trace", "input", in.Describe(), "read_s", fmt.Sprintf("%.2f", time.Since(start).Seconds()), "streamed", in.Stream != nil)
	out, err := openOutputs(c, stdio, set, in, tr)
	if err != nil {
		return err
	}
	defer out.abort()
	total := int64(tr.Len())
	if in.Stream != nil {
		total = -1 // not known before the trace is read
	}
	progress := cli.NewProgress(stdio.Err, c.Bool("quiet"), total, "replaying")
	cfg := simConfig(c, in, set.horizonUs)
	cfg.Deploy, cfg.Client = dep, client
	cfg.Progress = func(now, done int64) {
		progress.Set(done, fmt.Sprintf("replaying t=%.1fs", float64(now)/1e6))
	}
	if out.timeline != nil {
		cfg.Observer = out.timeline
	}
	if out.decOut != nil {
		cfg.Decisions = out.decOut
	}
	simStart := time.Now()
	res, err := replay.Simulate(ctx, cfg, tr, tr.FollowUps(), out.write)
	progress.Finish()
	if err == nil || res.Interrupted {
		if release != nil {
			if out.results != nil {
				out.results.Sync() // it writes on its own goroutine
			}
			if err := release(res.Interrupted); err != nil {
				return err
			}
		}
	}
	if res.Interrupted {
		if terr := out.sim.Interrupt(replayedHeader(in.Header)); terr != nil {
			log.Warn("finish the interrupted trace", "error", terr)
		}
		return cli.Interrupted(stdio, replay.TextSummary(&res.Summary), res.Summary.InjectedRequests, res.Summary.CompletedRequests, err)
	}
	if err != nil {
		return err
	}
	if err := tr.Close(); err != nil {
		return err
	}
	wall := time.Since(simStart).Seconds()
	for _, w := range append(tr.Warnings(), res.Warnings...) {
		log.Warn(w)
	}
	if err := out.commit(&res.Summary); err != nil {
		return err
	}
	log.Info("replayed", "rows", tr.Len(), "skipped", tr.Skipped(), "injected", res.Summary.InjectedRequests,
		"completed", res.Summary.CompletedRequests, "sim_wall_s", fmt.Sprintf("%.2f", wall),
		"requests_per_s", fmt.Sprintf("%.0f", float64(res.Summary.InjectedRequests)/max(wall, 1e-9)))
	if set.format == "text" {
		return replay.WriteSummary(set.summaryTo, "text", &res.Summary)
	}
	return nil
}

// setUp decides what the trace is replayed on (traceSetup) and resolves
// it. It fills set.opts and set.header (the replayed trace's header,
// recording the deployment and the client) and returns the resolved
// deployment and the client to simulate.
func setUp(c *ucli.Context, set *settings, in *input.Trace, log *slog.Logger) (*deploy.Resolved, replay.Client, error) {
	given, client, facts, err := traceSetup(c, in, &set.opts, log)
	if err != nil {
		return nil, client, err
	}
	dep, err := deploy.Resolve(given)
	if err != nil {
		return nil, client, err
	}
	set.header = replayedHeader(in.Header)
	if err := deploy.Record(set.header, given, dep); err != nil {
		return nil, client, err
	}
	set.header.XExt.Client = &facts
	set.setup = &replay.Setup{Deployment: set.header.Deployment(), Client: facts}
	return dep, client, nil
}

// traceSetup decides what the trace is replayed on, for replay and replay
// sweep alike: the deployment its header states under --deployment and the
// flags (cli.TraceDeployment, not yet resolved), the session mode
// (cli.TraceSessionMode, into opts) and the client (traceClient). facts is
// the client as the replayed header records it.
func traceSetup(c *ucli.Context, in *input.Trace, opts *replay.TraceOptions, log *slog.Logger) (deploy.Config, replay.Client, tracev2.Client, error) {
	warn := func(m string) { log.Warn(m) }
	var facts tracev2.Client
	given, err := cli.TraceDeployment(c, in.Name, in.Header, warn)
	if err != nil {
		return given, replay.Client{}, facts, err
	}
	mode, err := cli.TraceSessionMode(c, in.Name, in.Header, warn)
	if err != nil {
		return given, replay.Client{}, facts, err
	}
	opts.ClosedLoop = mode == cli.SessionClosedLoop
	var stated *tracev2.Client
	if x := in.Header.XExt; x != nil && x.Client != nil && !c.Bool("ignore-trace-deployment") {
		facts, stated = *x.Client, x.Client
		if !c.IsSet("think-time") && facts.ThinkTimeUs > 0 {
			opts.ThinkTimeUs = facts.ThinkTimeUs
		}
	}
	client, err := traceClient(c, in, stated, opts, log)
	if err != nil {
		return given, client, facts, err
	}
	facts.SessionMode, facts.MaxConcurrency, facts.SendGapUs = mode, client.MaxConcurrency, client.SendGapUs
	return given, client, facts, nil
}

// traceClient is the client to replay (cli.TraceClient: the flags', the
// header's, or the one found in the rows). A capped client's rows are
// injected at their intended arrival, and the cap decides their send.
func traceClient(c *ucli.Context, in *input.Trace, stated *tracev2.Client, opts *replay.TraceOptions, log *slog.Logger) (replay.Client, error) {
	detect := func() (replay.Client, bool, string, error) {
		if !in.Spans { // what DetectClient finds in rows without a send and an end
			var none replay.ClientFinding
			return none.Client, none.Capped, none.String(), nil
		}
		f, err := replay.DetectClient(in.Rows)
		return f.Client, f.Capped, f.String(), err
	}
	client, err := cli.TraceClient(c, in.Name, stated, detect, func(m string) { log.Warn(m) }, func(m string) { log.Debug(m) })
	if err != nil {
		return client, err
	}
	if client.Capped() {
		if c.IsSet("inject-at") && c.String("inject-at") == "send" {
			return client, cli.Usagef("--inject-at send contradicts a capped client: its requests arrive at their intended time and the cap decides when they are sent")
		}
		opts.InjectAtArrival = true
	}
	return client, nil
}

// replayedHeader is the header of the replayed trace (tracev2.md §3): mode
// replayed, with the input's SLO targets, KV offload, observed KV metrics
// and session context growth; setUp adds the deployment and client.
func replayedHeader(in *tracev2.Header) *tracev2.Header {
	h := tracev2.DefaultHeader()
	h.Mode = tracev2.ModeReplayed
	h.WarmUpRequests = 0
	h.SessionContextGrowth = in.SessionContextGrowth
	h.GoodputSLOTargets = in.GoodputSLOTargets
	h.KVOffload = in.KVOffload
	h.ObservedKVMetrics = in.ObservedKVMetrics
	h.XExt = &tracev2.Ext{Tool: "replay", ToolVersion: cli.Version, TimeOrigin: tracev2.OriginRelative}
	return h.Clone()
}

// replayedColumns keeps the input's optional columns that a simulated
// trace may carry, and adds the instance and preemption columns.
func replayedColumns(in tracev2.Columns) tracev2.Columns {
	return tracev2.Columns{
		SLOTarget: in.SLOTarget, Adapter: in.Adapter, ThinkTime: in.ThinkTime, HashIDs: in.HashIDs,
		Instance: true, Preemptions: true,
	}
}
