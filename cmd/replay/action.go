package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
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
}

// traceSettings validates the flags that say how the trace's rows become
// requests, and --horizon and --hash-block-tokens.
func traceSettings(c *ucli.Context) (opts replay.TraceOptions, horizonUs int64, err error) {
	switch c.String("inject-at") {
	case "send":
	case "arrival":
		opts.InjectAtArrival = true
	default:
		return opts, 0, cli.Usagef("--inject-at %q: want send or arrival", c.String("inject-at"))
	}
	switch c.String("session-mode") {
	case "fixed":
	case "closed-loop":
		opts.ClosedLoop = true
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
	opts.SkipFailed = c.Bool("skip-failed")
	return opts, horizonUs, nil
}

// simConfig is the replay's configuration of the trace in, but for the
// deployment and progress: the seed (--seed, else the trace's), its
// session context growth and goodput targets, the horizon and the hash
// block size.
func simConfig(c *ucli.Context, in *input, horizonUs int64) replay.Config {
	seed := c.Int64("seed")
	if !c.IsSet("seed") && in.header.WorkloadSeed != nil {
		seed = *in.header.WorkloadSeed
	}
	return replay.Config{
		Seed:            seed,
		ContextGrowth:   in.header.SessionContextGrowth,
		HorizonUs:       horizonUs,
		SLOTargets:      replay.SLOTargets(in.header.GoodputSLOTargets),
		HashBlockTokens: c.Int("hash-block-tokens"),
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
// the whole trace, then open the outputs, simulate, and commit them.
func action(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	set, err := parseSettings(c, stdio)
	if err != nil {
		return err
	}
	dep, err := cli.ResolvedDeployment(c)
	if err != nil {
		return err
	}
	start := time.Now()
	in, err := loadInput(c, stdio, log)
	if err != nil {
		return err
	}
	defer in.close()
	client, err := traceClient(c, in, &set.opts, log)
	if err != nil {
		return err
	}
	set.opts.Ordinals = set.traceOut != ""
	tr, err := replay.NewTrace(in.rows, set.opts)
	if err != nil {
		return fmt.Errorf("%s: %w", in.name, err)
	}
	defer tr.Close()
	if c.IsSet("rate") {
		if err := tr.SetRate(c.Float64("rate")); err != nil {
			return fmt.Errorf("%s: --rate: %w", in.name, err)
		}
	}
	log.Debug("trace", "input", in.describe(), "read_s", fmt.Sprintf("%.2f", time.Since(start).Seconds()))
	out, err := openOutputs(c, stdio, set, in, tr)
	if err != nil {
		return err
	}
	defer out.abort()
	progress := cli.NewProgress(stdio.Err, c.Bool("quiet"), int64(tr.Len()), "replaying")
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

// traceClient is the client to replay: the flags', else the one found in
// the trace's rows (unless --detect-client=false). A capped client's rows
// are injected at their intended arrival, and the cap decides their send.
func traceClient(c *ucli.Context, in *input, opts *replay.TraceOptions, log *slog.Logger) (replay.Client, error) {
	client, given, err := cli.ClientFromFlags(c)
	if err != nil {
		return client, err
	}
	if !given && c.Bool("detect-client") {
		f, err := replay.DetectClient(in.rows)
		if err != nil {
			return client, fmt.Errorf("%s: %w", in.name, err)
		}
		if f.Capped {
			gap := client.SendGapUs
			client = f.Client
			if c.IsSet("client-send-gap") {
				client.SendGapUs = gap
			}
			log.Warn(f.String() + "; replaying that client (--client-max-concurrency overrides, --detect-client=false turns this off)")
		} else {
			log.Debug(f.String())
		}
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
// and session context growth.
func replayedHeader(in *tracev2.Header) *tracev2.Header {
	h := tracev2.DefaultHeader()
	h.Mode = tracev2.ModeReplayed
	h.WarmUpRequests = 0
	h.SessionContextGrowth = in.SessionContextGrowth
	h.GoodputSLOTargets = in.GoodputSLOTargets
	h.KVOffload = in.KVOffload
	h.ObservedKVMetrics = in.ObservedKVMetrics
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
