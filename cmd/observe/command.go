package main

import (
	"context"
	"log/slog"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/live"
	"servesim/internal/tracev2/importer"
	"servesim/internal/workload"
)

// description is observe's --help text after its usage line.
const description = `observe sends a workload (a spec YAML, a preset, or flags) to a server at the
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

   # Repeats with confidence: the same 200 requests 5 times (rep.r1 ... rep.r5),
   # then every metric's mean, 95% CI and CV over the runs and whether 5 was
   # enough (stderr; JSON in rep.repeat.json):
   observe --url http://127.0.0.1:8000 --workload chatbot --rate 4 -n 200 --streaming \
           --repeat 5 --trace-output rep

   # Did the upgrade help? Two servers in turn, A B A B ..., so drift touches
   # both alike (ab.a.r1, ab.b.r1, ...; each trace names its server):
   observe --url http://127.0.0.1:8000 --url-b http://127.0.0.1:8001 --workload chatbot \
           --rate 4 -n 200 --streaming --repeat 5 --trace-output ab

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
interrupted after a clean flush. The trace is written whole in every case.`

func command() cli.Command {
	flags := append(append(runFlags(), traceFlags()...), cli.SpecFlags(append(workload.Flags(), workload.ListFlags()...))...)
	return cli.Command{
		Name:        "observe",
		Usage:       "load a live OpenAI-compatible server (vLLM) and record every request as a TraceV2 trace",
		ArgsUsage:   "(none; with --merge: TRACE...)",
		Description: description,
		Flags:       flags,
		Action:      action,
		Choices:     cli.JoinChoices(deploy.FlagChoices(), workload.FlagChoices(), importer.FlagChoices()),
		Subcommands: []cli.Command{verifyCommand()},
	}
}

// action turns the flags into one live.Config and runs it.
func action(ctx context.Context, c *ucli.Context, stdio cli.IO, log *slog.Logger) error {
	if c.Bool("merge") {
		if err := mergeOnly(c); err != nil {
			return err
		}
		return live.Run(ctx, live.Config{Merge: true, Inputs: c.Args().Slice(), TraceOutput: c.String("trace-output"),
			BLISHeader: c.Bool("blis-compatible-header")}, liveIO(ctx, c, stdio, log))
	}
	if _, err := cli.Positional(c, 0); err != nil {
		return err
	}
	cfg, err := config(c)
	if err != nil {
		return err
	}
	if c.IsSet("trace") {
		if cfg.SelfTest {
			return live.Run(ctx, cfg, liveIO(ctx, c, stdio, log)) // the trace is not read
		}
		if cfg.Trace, err = traceConfig(c); err != nil {
			return err
		}
	} else {
		cfg.Workload = func() (workload.Options, error) {
			if err := refuseTraceFlags(c); err != nil {
				return workload.Options{}, err
			}
			return workload.FromFlags(cli.SpecValues(c, append(workload.Flags(), cli.SeedSpec())), stdio.In, cli.StdinName)
		}
	}
	return live.Run(ctx, cfg, liveIO(ctx, c, stdio, log))
}
