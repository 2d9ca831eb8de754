package main

import (
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/deploy"
	"servesim/internal/flagspec"
	"servesim/internal/replay"
	"servesim/internal/tracev2/importer"
	"servesim/internal/workload"
)

func command() cli.Command {
	flags := traceFlags()
	flags = append(flags,
		&ucli.StringFlag{Name: "results-path", Category: flagspec.CatOutput, Usage: "write the SimResult JSON here", DefaultText: "stdout, unless --format text"},
		&ucli.BoolFlag{Name: "interval", Category: flagspec.CatOutput, Usage: "also replay with every step time × (1 ± 1.645σ), σ the deployment's step_time_sigma, else the model's documented σ, and write those SimResults beside --results-path (sim.json: sim.lo.json, sim.hi.json); calibrate --interval reports how often the real values fall inside"},
		cli.FormatFlag("json", "json: SimResult array; jsonl: one SimResult per line; text: the summary table (SimResults only with --results-path)", "json", "jsonl", "text"),
		&ucli.StringFlag{Name: "metrics-out", Category: flagspec.CatOutput, Usage: "write the summary JSON (the keys of run's output, with the resolved deployment and client) to this file; calibrate --sim-metrics reads it"},
		&ucli.StringFlag{Name: "fleet-html", Category: flagspec.CatOutput, Usage: "with --fleet-file, write a page of the fleet over time (traffic, replicas, p99 TTFT per bucket) to this file"},
		&ucli.StringFlag{Name: "timeline", Category: flagspec.CatOutput, Usage: "write a Chrome trace-event JSON of the run (open it in ui.perfetto.dev): a process per instance with its steps, KV and batch counters and requests; with a cluster, a router process with routing decisions, rejections and P/D KV transfers; slows the run"},
	)
	flags = append(flags, cli.SimOutputFlags()...)
	flags = append(flags, cli.SpecFlags(append(replay.ClientFlags(true), replay.TimeScaleFlag()))...)
	flags = append(flags, cli.SpecFlags(replay.TraceDeploymentFlags())...)
	flags = append(flags, cli.SpecFlags(append(deploy.Flags(), deploy.ListFlags()...))...)
	flags = append(flags, cli.SpecFlags(append(replay.DecisionFlags(), replay.SLOFlag(), replay.FitnessFlag()))...)
	return cli.Command{
		Name:        "replay",
		Usage:       "feed a trace (TraceV2, BLIS, Azure, Mooncake, Vidur, vllm bench) through the vLLM simulator",
		ArgsUsage:   "[TRACE|-] [TRACE...]",
		Description: description,
		Flags:       flags,
		Action:      action,
		Subcommands: []cli.Command{sweepCommand()},
		Choices:     cli.JoinChoices(deploy.FlagChoices(), workload.FlagChoices(), importer.FlagChoices()),
	}
}

// traceFlags are the flags that say how a trace is read and injected,
// shared by replay and replay sweep.
func traceFlags() []ucli.Flag {
	var formats []string
	for _, f := range importer.Formats() {
		formats = append(formats, string(f))
	}
	return append(cli.InCategory(flagspec.CatTrace,
		&ucli.StringFlag{Name: "trace-header", Usage: "trace header YAML (two-file form, with --trace-data)"},
		&ucli.StringFlag{Name: "trace-data", Usage: "trace data CSV (two-file form)"},
		&ucli.StringFlag{Name: "from", Usage: "force the format of a foreign trace: " + strings.Join(formats, ", "), DefaultText: "detected from the content"},
		&ucli.BoolFlag{Name: "lenient", Usage: "skip malformed trace rows with a warning instead of stopping"},
		&ucli.BoolFlag{Name: "strict", Usage: "unknown trace header keys are errors, not warnings"},
		&ucli.StringFlag{Name: "inject-at", Value: "send", Usage: "inject each request at its send time (send) or its intended arrival (arrival); with a capped client (--client-max-concurrency, or one found in the trace) always the arrival"},
		&ucli.BoolFlag{Name: "skip-failed", Usage: "leave out rows whose status is not ok"},
		&ucli.StringFlag{Name: "session-mode", Value: "fixed", DefaultText: "the trace's client, else fixed", Usage: "fixed: every row at its own time; closed-loop: later session rounds follow the simulated completions"},
		&ucli.DurationFlag{Name: "think-time", Usage: "closed-loop think time when neither the row nor the trace gives one"},
		&ucli.DurationFlag{Name: "horizon", Usage: "stop the simulation at this simulated time, e.g. 10m", DefaultText: "run to the end"},
		&ucli.Float64Flag{Name: "rate", Usage: "replay the trace sped up or slowed down to this mean rate, requests/s: arrival gaps scaled, requests unchanged", DefaultText: "as recorded"},
		&ucli.IntFlag{Name: "hash-block-tokens", Value: replay.DefaultHashBlockTokens, Usage: "prompt tokens per ext_hash_ids entry (Mooncake: 512)"},
	), &ucli.Int64Flag{Name: "seed", Value: 42, Usage: "seed of the synthetic token ids", DefaultText: "the trace's workload_seed, else 42"})
}

// description is replay's --help text, with its examples.
const description = `replay injects every request of a trace at its send time into a discrete-event
simulator of vLLM (continuous batching, chunked prefill, paged KV cache with prefix
caching, preemption) and writes one SimResult per completed request.

TRACE is a single stream, a data CSV (its header is the sibling .yaml) or a header
YAML (its data is the sibling .csv); - reads stdin; gzip is read transparently. A
foreign trace is recognised by its content and imported: Azure's CSV (TIMESTAMP,
ContextTokens, GeneratedTokens), Mooncake's JSON lines, Vidur's CSV, vllm bench's
result JSON, an LLMServingSim run (its directory or requests.jsonl); stderr says
which format was found, and --from forces one. Real
traces are normalised so that the workload starts at t = 0, and rows are injected in
send order.

The deployment and the client: by default replay simulates the deployment the trace's
header states (x_ext.deployment, written by run, replay and observe; else BLIS's server
keys: model, tensor_parallel, max_num_seqs, block_size, gpu_memory_utilization,
max_model_len) and its client (concurrency cap, closed-loop users, session mode), so
that 'run --trace-output T; replay T' reproduces the run exactly. --deployment and the
flags still override; each override that contradicts the trace is a one-line warning
naming both values; --ignore-trace-deployment simulates on the defaults and the flags
alone, silently. A trace naming a model the simulator does not know is an error (exit
2) unless --model gives one (an embedded name or a config.json path). KV blocks and max_model_len the trace's simulator derived are derived again
when another key changes (--gpu L40S gets L40S's KV capacity). --metrics-out records
the resolved deployment and client beside the summary, for calibrate's config verdict.

A trace recorded by a client that capped its requests in flight (observe
--max-concurrency, BLIS observe's default of 256) is a closed loop once the server falls
behind: replay takes the cap from the header, or finds it in the rows of a trace whose
header does not say, and models that client — each request arrives at its intended
time, waits while the cap is reached and is sent when a slot frees — and says so
(--client-max-concurrency sets it, --detect-client=false turns the search off). The
whole trace is checked before anything is written, then read again as
it is replayed, so memory stays flat (about 12 bytes per row); stdin and foreign
imports are spooled to a temporary file for that. Prefix groups, Mooncake hash_ids
and accumulating sessions become shared KV blocks. Several traces of one run (the
per-worker traces of observe --shard) are merged by time onto the earliest worker's
start, in memory.

` + replay.InterruptedHelp + `
Examples:

   # The same traffic as run generated, replayed on a smaller batch:
   run --workload chatbot --rate 20 --trace-output chat
   replay chat.csv --max-num-seqs 64 --format text

   # Through a pipe, keeping the SimResults for calibrate:
   run --workload summarization --rate 2 --trace-output - | replay - --results-path sim.json

   # A production trace (its format is detected) on an A100, with a timeline:
   replay testdata/azure-llm-2023/AzureLLMInferenceTrace_conv_10min.csv --gpu A100-80 --format text \
          --metrics-out metrics.json --timeline timeline.json

   # Prefill/decode disaggregation, with a timeline of both pools and the transfers:
   replay chat.csv --prefill-instances 1 --decode-instances 2 --pd-decider always \
          --format text --timeline pd-timeline.json

   # Compare routing policies on one trace, four replicas each:
   replay chat.csv --num-instances 4 --routing-policy least-loaded --format text
   replay chat.csv --num-instances 4 --routing-policy weighted \
          --routing-scorers prefix-affinity:3,queue-depth:2 --format text

   # A run loaded from four client machines (observe --shard I/4), replayed as one:
   replay w0.csv w1.csv w2.csv w3.csv --format text

   # Grade the simulator against a capture of a live server (the capture records the
   # server's deployment; the report shows it beside the simulated one):
   observe --url http://127.0.0.1:8000 --model qwen3-14b --workload chatbot --rate 4 \
           --num-requests 200 --trace-output cap --vllm-args "--tensor-parallel-size 1"
   replay cap.csv --results-path sim.json --metrics-out sim-metrics.json
   calibrate cap.csv sim.json --sim-metrics sim-metrics.json --assert config.match==true

Exit codes: 0 success, 1 runtime failure, 2 bad usage or invalid input (located as
file:line:column; nothing is written), 130 interrupted.`
