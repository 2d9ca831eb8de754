package main

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/exitcode"
	"servesim/internal/fanout"
	"servesim/internal/flagspec"
	"servesim/internal/live"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// apiKeyEnv is read when --api-key is not given.
const apiKeyEnv = "OPENAI_API_KEY"

// config is the run's flags as one live.Config; live.Run checks the values.
func config(c *ucli.Context) (live.Config, error) {
	cfg := live.Config{
		URL: c.String("server-url"), Model: c.String("model"), APIKey: c.String("api-key"), Insecure: c.Bool("insecure"),
		Headers: c.StringSlice("header"), RequestTimeout: c.Duration("request-timeout"), Chat: c.Bool("chat"),
		Unconstrained: c.Bool("unconstrained-output"), MaxConcurrency: c.Int("max-concurrency"),
		WarmupRequests: c.Int("warmup-requests"), Prewarm: c.Int("prewarm"),

		TraceOutput: c.String("trace-output"), BLISHeader: c.Bool("blis-compatible-header"),
		RecordITL: c.Bool("record-itl"), ITLOutput: c.String("itl-output"), Drain: c.Duration("drain-timeout"),
		Summary: c.Bool("summary"),

		ResultJSON: c.String("result-json"), PercentileMetrics: c.String("percentile-metrics"),
		MetricPercentiles: c.String("metric-percentiles"), ResultDetailed: c.Bool("result-detailed"),
		Label: c.String("label"), Metadata: c.StringSlice("metadata"),

		MaxErrorRate: c.Float64("max-error-rate"), Goodput: c.String("goodput"), Scrape: c.Bool("scrape-metrics"),
		ScrapeInterval: c.Duration("scrape-interval"), MetricsOutput: c.String("metrics-output"),
		ServerConfig: c.String("server-config"), VLLMArgs: c.String("vllm-args"), SweepLevel: c.String("sweep-level"),

		Sweep: c.Bool("sweep"), SweepLevels: c.Int("sweep-levels"), Rates: c.String("rates"), SLO: c.String("slo"),
		SweepOutput: c.String("sweep-output"), HTML: c.String("html"), Overlay: c.String("overlay"),

		URLB: c.String("url-b"), RepeatOutput: c.String("repeat-output"),

		SelfTest: c.Bool("self-test"), NoSelfTest: c.Bool("no-self-test"), SelfTestStreams: c.Int("self-test-streams"),
		DryRun: c.Bool("dry-run"), StartAt: c.String("start-at"),

		Version: cli.Version,
	}
	if cfg.APIKey == "" {
		cfg.APIKey = os.Getenv(apiKeyEnv)
	}
	if c.IsSet("repeat") {
		n := c.Int("repeat")
		cfg.Repeat = &n
	}
	if c.IsSet("duration") {
		d := c.Duration("duration")
		cfg.Duration = &d
	}
	if !cfg.SelfTest {
		var err error
		if cfg.Shard, err = fanout.Parse(c.String("shard"), os.Getenv); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// liveIO is what the run gets of the process: stdio, the log, a progress
// bar on a terminal (not with --quiet) and the second interrupt.
func liveIO(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) live.IO {
	quiet := c.Bool("quiet")
	return live.IO{In: stdio.In, Out: stdio.Out, Err: stdio.Err, Log: log, Aborted: cli.Aborted(ctx),
		Progress: func(max int64, desc string) live.Progress {
			if quiet || !cli.IsTerminal(stdio.Err) {
				return nil
			}
			return cli.NewProgress(stdio.Err, quiet, max, desc)
		}}
}

// runFlags are observe's own flags (the workload's and --trace's are
// shared with the other commands).
func runFlags() []ucli.Flag {
	return cli.Categorised(runHeadings(), []ucli.Flag{
		&ucli.StringFlag{Name: "server-url", Aliases: []string{"url"}, Usage: "base URL of the OpenAI-compatible server, e.g. http://127.0.0.1:8000"},
		&ucli.StringFlag{Name: "model", Usage: "model name sent in each request", DefaultText: "the first model the server lists"},
		&ucli.StringFlag{Name: "api-key", Usage: "API key sent as a bearer token; never written anywhere", DefaultText: "$" + apiKeyEnv},
		&ucli.BoolFlag{Name: "insecure", Usage: "skip TLS certificate checks"},
		&ucli.StringSliceFlag{Name: "header", Usage: "extra request header NAME:VALUE (repeatable)"},
		&ucli.DurationFlag{Name: "request-timeout", Value: 300 * time.Second, Usage: "bound on one request from its send to its last byte; 0 = none (the workload's --timeout bounds it from the intended time)"},
		&ucli.BoolFlag{Name: "chat", Usage: "send /v1/chat/completions (one user message) instead of /v1/completions"},
		&ucli.BoolFlag{Name: "unconstrained-output", Usage: "let the server choose the output length (no max_tokens/min_tokens)"},
		&ucli.IntFlag{Name: "max-concurrency", Usage: "cap on requests in flight; a request held back keeps its intended time (0 = open loop)"},
		&ucli.DurationFlag{Name: "duration", Usage: "send no request intended after this time, e.g. 10m (sets --horizon; without a spec, --num-requests becomes unlimited)", DefaultText: "none"},
		&ucli.IntFlag{Name: "warmup-requests", Usage: "requests sent before the run and not recorded; recorded ids start at N"},
		&ucli.IntFlag{Name: "prewarm", Value: -1, Usage: "open N keep-alive connections before the run, so no measured request pays for connection set-up; -1 = the run's concurrency when known (--max-concurrency, closed-loop users), 0 = none"},
		&ucli.StringFlag{Name: "trace-output", Aliases: []string{"o", "output"}, Value: "-", Usage: "trace: - for one stream on stdout, or PREFIX for PREFIX.yaml + PREFIX.csv (written row by row)"},
		cli.BLISHeaderFlag(),
		cli.TraceExtFlag(),
		&ucli.StringFlag{Name: "server-config", Usage: "the server's deployment as a deployment YAML (run's --deployment keys: model, gpu, tensor_parallel, max_num_seqs, ...), recorded in the trace header as declared; what the server reports of itself wins"},
		&ucli.StringFlag{Name: "vllm-args", Usage: "the `vllm serve` command line the server was started with, e.g. \"vllm serve Qwen/Qwen3-14B --tensor-parallel-size 2 --max-num-seqs 128\"; recorded in the header, and the flags the simulator models become declared deployment keys"},
		&ucli.StringFlag{Name: "sweep-level", Usage: "name this run as one level of a sweep, e.g. rate=8 (recorded in the header's client)"},
		&ucli.BoolFlag{Name: "record-itl", Usage: "write every streamed chunk's arrival to the ITL CSV (PREFIX.itl.csv); forces streaming"},
		&ucli.StringFlag{Name: "itl-output", Usage: "ITL CSV path (required with --trace-output -)", DefaultText: "PREFIX.itl.csv"},
		&ucli.DurationFlag{Name: "drain-timeout", Value: 10 * time.Second, Usage: "after Ctrl+C, how long requests in flight may finish before they are cancelled"},
		&ucli.BoolFlag{Name: "summary", Usage: "print the end summary on stdout instead of stderr (needs --trace-output PREFIX)"},
		&ucli.StringFlag{Name: "result-json", Usage: "also write the results as vllm bench serve's --save-result JSON (its keys), for dashboards built on it"},
		&ucli.StringFlag{Name: "percentile-metrics", Value: "ttft,tpot,itl", Usage: "metrics given percentiles in --result-json: ttft, tpot, itl, e2el, client_queue_time, e2el_including_client_queue"},
		&ucli.StringFlag{Name: "metric-percentiles", Value: "99", Usage: "percentiles of those metrics in --result-json, e.g. 50,90,99"},
		&ucli.BoolFlag{Name: "result-detailed", Usage: "--result-json keeps the per-request arrays too (vllm bench serve's --save-detailed; the vllm-bench importer reads them)"},
		&ucli.StringFlag{Name: "label", Usage: "--result-json label"},
		&ucli.StringSliceFlag{Name: "metadata", Usage: "KEY=VALUE written as a top-level key of --result-json (repeatable)"},
		&ucli.Float64Flag{Name: "max-error-rate", Value: 1, Usage: "exit 3 when more than this share of the recorded requests failed (0.05 = 5%); a run in which every request failed exits 1 whatever it is (not the levels of --sweep, which pass the capacity on purpose)"},
		&ucli.StringFlag{Name: "goodput", Usage: "goodput targets in ms, e.g. ttft:500,tpot:50,e2el:5000 (a request counts when it meets all)"},
		&ucli.BoolFlag{Name: "scrape-metrics", Aliases: []string{"scrape-kv-metrics"}, Usage: "read the server's /metrics before, during and after the run: time series in PREFIX.metrics.csv, prefix-cache deltas in the header"},
		&ucli.DurationFlag{Name: "scrape-interval", Value: time.Second, Usage: "time between /metrics scrapes during the run"},
		&ucli.StringFlag{Name: "metrics-output", Usage: "path of the /metrics time series", DefaultText: "PREFIX.metrics.csv"},
		&ucli.BoolFlag{Name: "sweep", Usage: "sweep the server: a synchronous level, a throughput level (the ceiling), then --sweep-levels rates between them (or --rates); a trace per level (PREFIX-<k>-<name>) and a summary"},
		&ucli.IntFlag{Name: "sweep-levels", Value: 5, Usage: "rates between the synchronous and the throughput levels of --sweep"},
		&ucli.StringFlag{Name: "rates", Usage: "sweep these rates, requests/s, e.g. 2,4,8 (after the synchronous and throughput levels with --sweep)"},
		&ucli.StringFlag{Name: "slo", Usage: "judge each sweep level by this SLO, as run sweep does, e.g. 'ttft.p99<500ms,itl.p99<50ms' (exit 3 when no level meets it)"},
		&ucli.StringFlag{Name: "sweep-output", Usage: "the sweep's document (run sweep's JSON: sweep merge and --overlay read it)", DefaultText: "PREFIX.sweep.json"},
		&ucli.StringFlag{Name: "html", Usage: "write the sweep's HTML page (run sweep's) to this file"},
		&ucli.StringFlag{Name: "overlay", Usage: "a simulated sweep of the same deployment (run sweep --format json -o FILE): the page draws its curves and knees beside the measured ones"},
		&ucli.IntFlag{Name: "repeat", Value: 1, Usage: "run the same requests N times (1 to 100), each run its own trace PREFIX.r<i>, then state every metric's mean, 95% interval and CV over the runs and whether N was enough"},
		&ucli.StringFlag{Name: "url-b", Usage: "a second server measured in turn with --server-url, A B A B … (--repeat runs each); traces PREFIX.a.r<i> and PREFIX.b.r<i>"},
		&ucli.StringFlag{Name: "repeat-output", Usage: "the JSON summary of --repeat or --url-b", DefaultText: "PREFIX.repeat.json"},
		&ucli.BoolFlag{Name: "merge", Usage: "merge the traces given as arguments (the per-worker traces of a --shard run) by time into one, written to --trace-output; contacts no server"},
		&ucli.BoolFlag{Name: "dry-run", Usage: "write the requests the run would send (TraceV2, mode generated, status planned: intended times, lengths, sessions; this worker's slice with --shard) and contact no server"},
		&ucli.BoolFlag{Name: "self-test", Usage: "only measure this client's own error against an in-process loopback server, and exit"},
		&ucli.BoolFlag{Name: "no-self-test", Usage: "skip the short self-test before the run"},
		&ucli.IntFlag{Name: "self-test-streams", Usage: "self-test concurrency", DefaultText: "--max-concurrency, the closed-loop users, else 100"},
		cli.SeedFlag(),
		cli.ShardFlag(),
		&ucli.StringFlag{Name: "start-at", Usage: "wall-clock start (t0) shared by every worker of a sharded run: RFC 3339, or Unix seconds (e.g. $(( $(date +%s) + 30 ))); set-up must end before it"},
	})
}

// runHeadings are the --help headings of runFlags (--trace-output and
// --seed, common to the commands, head the list).
func runHeadings() map[string][]string {
	return map[string][]string{
		flagspec.CatServer: {"server-url", "model", "api-key", "insecure", "header", "chat", "unconstrained-output",
			"server-config", "vllm-args", "scrape-metrics", "scrape-interval"},
		flagspec.CatWorkload: {"duration", "dry-run"},
		flagspec.CatClient: {"request-timeout", "max-concurrency", "warmup-requests", "prewarm", "drain-timeout",
			"self-test", "no-self-test", "self-test-streams"},
		flagspec.CatSweep: {"sweep-level", "sweep", "sweep-levels", "rates", "slo", "sweep-output", "html", "overlay",
			"repeat", "url-b", "repeat-output", "merge", "start-at"},
		flagspec.CatOutput: {"record-itl", "itl-output", "summary", "result-json", "percentile-metrics", "metric-percentiles",
			"result-detailed", "label", "metadata", "max-error-rate", "goodput", "metrics-output"},
	}
}

// traceFlags are the flags of observe --trace; their names are replay's.
func traceFlags() []ucli.Flag {
	var formats []string
	for _, f := range importer.Formats() {
		formats = append(formats, string(f))
	}
	return cli.InCategory(flagspec.CatTrace,
		&ucli.StringFlag{Name: "trace", Usage: "play this trace against the server instead of a workload: TraceV2 in any form replay reads (gzip, - for stdin), or a foreign trace with --from"},
		&ucli.StringFlag{Name: "from", Usage: "--trace is a foreign trace: " + strings.Join(formats, ", ")},
		&ucli.Float64Flag{Name: "time-scale", Value: 1, Usage: "multiply every recorded time (and think time) by this: 0.5 plays the trace twice as fast"},
		&ucli.DurationFlag{Name: "trace-offset", Usage: "start playing this far into the trace, e.g. 2h (with --duration: a window of it)"},
		&ucli.StringFlag{Name: "inject-at", Value: "arrival", Usage: "send each row at its intended arrival (arrival) or at its recorded send time (send)"},
		&ucli.StringFlag{Name: "session-mode", Value: "fixed", Usage: "fixed: every row at its own time (a session's rounds in order); closed-loop: later rounds follow the live completions plus think time"},
		&ucli.IntFlag{Name: "hash-block-tokens", Value: tracev2.DefaultHashBlockTokens, Usage: "prompt tokens per ext_hash_ids entry (Mooncake: 512)"},
		&ucli.BoolFlag{Name: "lenient", Usage: "skip malformed trace rows with a warning instead of stopping"},
	)
}

// workloadOnly are the workload flags that shape a workload; with --trace
// the trace does.
var workloadOnly = []string{"workload", "workload-spec", "rate", "arrival", "concurrency", "prompt-tokens",
	"prompt-tokens-stdev", "prompt-tokens-min", "prompt-tokens-max", "output-tokens", "output-tokens-stdev",
	"output-tokens-min", "output-tokens-max", "prefix-tokens", "timeout", "horizon"}

// refuseTraceFlags fails when a --trace flag is given without --trace.
func refuseTraceFlags(c *ucli.Context) error {
	for _, f := range traceFlags() {
		if n := f.Names()[0]; c.IsSet(n) {
			return exitcode.Usagef("--%s applies to --trace only", n)
		}
	}
	return nil
}

// traceConfig is the --trace flags; the workload flags do not apply.
func traceConfig(c *ucli.Context) (*live.TraceConfig, error) {
	for _, n := range workloadOnly {
		if c.IsSet(n) {
			return nil, exitcode.Usagef("--%s does not apply to --trace: the trace gives the requests (see --time-scale, --trace-offset, --duration, --num-requests)", n)
		}
	}
	t := &live.TraceConfig{Path: c.String("trace"), From: c.String("from"), Lenient: c.Bool("lenient"),
		TimeScale: c.Float64("time-scale"), Offset: c.Duration("trace-offset"), InjectAt: c.String("inject-at"),
		SessionMode: c.String("session-mode"), HashBlock: c.Int("hash-block-tokens"), ThinkTime: c.Duration("think-time"),
		Streaming: c.Bool("streaming")}
	if c.IsSet("num-requests") {
		n := c.Int64("num-requests")
		t.NumRequests = &n
	}
	if c.IsSet("seed") {
		s := c.Int64("seed")
		t.Seed = &s
	}
	return t, nil
}

// mergeOnly refuses every flag but those of --merge: it only reads traces
// and writes one.
func mergeOnly(c *ucli.Context) error {
	allowed := []string{"merge", "trace-output", "blis-compatible-header", "trace-ext", "quiet", "log-level"}
	for _, f := range c.Command.Flags {
		if n := f.Names()[0]; c.IsSet(n) && !slices.Contains(allowed, n) {
			return exitcode.Usagef("--merge only reads traces and writes one: --%s does not apply", n)
		}
	}
	return nil
}
