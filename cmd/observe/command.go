package main

import (
	"context"
	"log/slog"
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/httpload"
	"servesim/internal/workload"
)

func command() cli.Command {
	flags := []ucli.Flag{
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
		&ucli.BoolFlag{Name: "merge", Usage: "merge the traces given as arguments (the per-worker traces of a --shard run) by time into one, written to --trace-output; contacts no server"},
		&ucli.BoolFlag{Name: "dry-run", Usage: "write the requests the run would send (TraceV2, mode generated, status planned: intended times, lengths, sessions; this worker's slice with --shard) and contact no server"},
		&ucli.BoolFlag{Name: "self-test", Usage: "only measure this client's own error against an in-process loopback server, and exit"},
		&ucli.BoolFlag{Name: "no-self-test", Usage: "skip the short self-test before the run"},
		&ucli.IntFlag{Name: "self-test-streams", Usage: "self-test concurrency", DefaultText: "--max-concurrency, the closed-loop users, else 100"},
		cli.SeedFlag(),
		cli.ShardFlag(),
		&ucli.StringFlag{Name: "start-at", Usage: "wall-clock start (t0) shared by every worker of a sharded run: RFC 3339, or Unix seconds (e.g. $(( $(date +%s) + 30 ))); set-up must end before it"},
	}
	flags = append(flags, traceFlags()...)
	flags = append(flags, cli.WorkloadFlags()...)
	return cli.Command{
		Name:      "observe",
		Usage:     "load a live OpenAI-compatible server (vLLM) and record every request as a TraceV2 trace",
		ArgsUsage: "(none; with --merge: TRACE...)",
		Description: `observe sends a workload (a spec YAML, a preset, or flags) to a server at the
intended times, open or closed loop, and records each request as it finishes: its
intended and actual send times, first chunk, first token, last chunk, tokens, status.
Latencies are also reported from the intended send time, so neither a slow server
nor --max-concurrency can hide queueing (no coordinated omission). Every request gets
a row, failures included (HTTP errors with their body, resets, stalls, timeouts).

--trace plays a recorded trace instead (any form replay reads: TraceV2, or
--from azure, mooncake, vidur, vllm-bench, llmservingsim; gzip; - for stdin): each
row at its recorded time (times --time-scale, the first played row at t0), with its
prompt and output lengths, its session and round (--session-mode closed-loop sends
later rounds after the live completions), and its shared prefixes: prefix groups and
hash ids become prompts sharing exactly those leading blocks of text.

The trace is TraceV2 mode real, one time origin t0 (the instant before the first
send; created_at is its wall clock). Its header records the server and the client
that made it, each fact marked measured, declared or absent (x_ext.sources): what
the server says of itself (GET /version; block size, GPU blocks, GPU memory
utilisation and prefix caching from vllm:cache_config_info on /metrics; the model
and max_model_len from /v1/models), what --server-config and --vllm-args declare
(tensor parallelism, max_num_seqs, ...), and the client (--max-concurrency,
closed-loop users, think time, arrival process, rate, streaming, warm-up, sweep
level, the peak of requests in flight). replay and calibrate fit simulate on them
by default. BLIS's server keys hold what BLIS has keys for; the rest is x_ext, in
the header unless --blis-compatible-header moves it to PREFIX.ext.yaml. Rows are written whole as requests finish, so a
crash leaves a valid trace. Ctrl+C stops sending, lets requests in flight finish for
--drain-timeout, writes the trailer (x_ext.interrupted) and exits 130; a second
Ctrl+C cancels them at once. A short self-test against an in-process loopback server
first measures this client's own error (x_ext.self_test); --self-test runs only that.

Examples:

   # Chatbot traffic at 4 req/s, streamed; trace in cap.yaml + cap.csv:
   observe --url http://127.0.0.1:8000 --model qwen3-14b --workload chatbot --rate 4 \
           --streaming --num-requests 200 --record-itl --trace-output cap
   replay cap.csv --model qwen3-14b --results-path sim.json
   calibrate cap.csv sim.json --html report.html

   # The same through a pipe (single-stream trace on stdout, summary on stderr):
   observe --url http://127.0.0.1:8000 --workload chatbot --rate 4 --streaming -o - \
     | tee cap.trace | replay - --model qwen3-14b --results-path sim.json

   # Say how the server was started, so the replay needs no deployment flags:
   observe --url http://127.0.0.1:8000 --workload chatbot --rate 4 --trace-output cap \
           --vllm-args "vllm serve Qwen/Qwen3-14B --tensor-parallel-size 2 --max-num-seqs 128"
   replay cap.csv --results-path sim.json --metrics-out sim-metrics.json
   calibrate cap.csv sim.json --sim-metrics sim-metrics.json --html report.html

   # 100 closed-loop users for 5 minutes, with goodput and /metrics:
   observe --url http://127.0.0.1:8000 --concurrency 100 --duration 5m --streaming \
           --goodput ttft:500,tpot:50 --scrape-metrics --trace-output load

   # The results also in vllm bench serve's --save-result JSON, for dashboards on it:
   observe --url http://127.0.0.1:8000 --workload chatbot --rate 8 --streaming -o cap \
           --result-json result.json --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99

   # Sweep the server (GuideLLM's sweep): synchronous, throughput, then 5 rates
   # between; a trace per level (sw-0-synchronous.csv, ...), run sweep's table on
   # stdout and document in sw.sweep.json; the page overlays the simulator's curve:
   run sweep --workload chatbot -n 300 --grid rate=1..40 --format json -o sim.json
   observe --url http://127.0.0.1:8000 --workload chatbot -n 300 --streaming --sweep -o sw \
           --slo 'ttft.p99<500ms,itl.p99<50ms' --overlay sim.json --html sweep.html

   # Production traffic on a staging server: 30 minutes of a Mooncake trace from
   # its second hour on, its prefix blocks kept, then the simulator on the capture:
   observe --url http://127.0.0.1:8000 --trace conversation_trace.jsonl --from mooncake \
           --trace-offset 1h --duration 30m --streaming --trace-output prod
   replay prod.csv --model qwen3-14b --results-path sim.json
   calibrate prod.csv sim.json --html report.html

   # Load from 4 client machines (or GNU parallel): each sends its slice of the
   # same stream from one shared start; the traces merge by time:
   observe --url http://10.0.0.5:8000 --workload chatbot --rate 400 --num-requests 40000 \
           --shard 2/4 --start-at 2026-05-01T10:00:00Z --trace-output w2
   observe --merge w0.csv w1.csv w2.csv w3.csv --trace-output all
   replay all.csv --results-path sim.json      # or: replay w0.csv w1.csv w2.csv w3.csv

Exit codes: 0 success, 1 runtime failure (every request failed included), 2 bad
usage or invalid input, 3 more requests failed than --max-error-rate allows, 130
interrupted after a clean flush. The trace is written whole in every case.`,
		Flags:  flags,
		Action: action,
	}
}

func action(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) (err error) {
	if c.Bool("merge") {
		return mergeTraces(c, stdio, log)
	}
	if _, err := cli.Positional(c, 0); err != nil {
		return err
	}
	cfg, err := readConfig(c)
	if err != nil {
		return err
	}
	// Nothing the run writes to stderr carries its secrets (the trace's
	// error messages are redacted by the client).
	red := httpload.NewRedactor(httpload.Config{BaseURL: cfg.url, APIKey: cfg.apiKey, Headers: cfg.headers})
	log = slog.New(&redactHandler{h: log.Handler(), red: red})
	defer func() { err = redactError(err, red) }()
	if cfg.selfTestOnly {
		return selfTestOnly(ctx, cfg, stdio)
	}
	if c.IsSet("trace") {
		tr, err := readTrace(c, cfg, stdio, log)
		if err != nil {
			return err
		}
		if cfg.sweep.active() {
			return cli.Usagef("--trace plays a trace at its own times: --sweep and --rates do not apply")
		}
		if cfg.dryRun {
			return dryRun(cfg, tr, stdio)
		}
		return observe(ctx, cfg, tr, stdio, log)
	}
	if err := refuseTraceFlags(c); err != nil {
		return err
	}
	opts, err := cli.WorkloadOptions(c, stdio)
	if err != nil {
		return err
	}
	if c.IsSet("duration") {
		d := c.Duration("duration")
		if d <= 0 {
			return cli.Usagef("--duration %v: must be > 0", d)
		}
		if opts.Horizon == nil || *opts.Horizon > d {
			opts.Horizon = &d
		}
		if opts.NumRequests == nil && opts.SpecPath == "" {
			unlimited := int64(0)
			opts.NumRequests = &unlimited
		}
	}
	wl, err := workload.Resolve(opts)
	if err != nil {
		return err
	}
	for _, w := range wl.Warnings {
		log.Warn(w)
	}
	if cfg.sweep.active() {
		return runSweep(ctx, cfg, wl, stdio, log)
	}
	tr := &specTraffic{wl: wl, shard: cfg.shard}
	if cfg.dryRun {
		return dryRun(cfg, tr, stdio)
	}
	return observe(ctx, cfg, tr, stdio, log)
}

// selfTestOnly is observe --self-test: the full self-test, reported on
// stderr.
func selfTestOnly(ctx context.Context, cfg *config, stdio cli.IO) error {
	streams := cfg.selfTestStreams
	if streams == 0 {
		streams = cfg.maxConc
	}
	if streams == 0 {
		streams = defaultSelfTestStreams
	}
	st, err := runSelfTest(ctx, min(streams, maxSelfTestStreams), fullSelfTest())
	if err != nil {
		return err
	}
	writeSelfTest(stdio.Err, st)
	return nil
}
