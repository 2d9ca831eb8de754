package replay

import "servesim/internal/sweep"

// TraceSweepHelp is the --help text of replay sweep (ExecuteSweep): one trace on a
// grid of deployments.
var TraceSweepHelp = `sweep replays one trace (any form replay reads, --from imports included) on every
case of a grid: the base deployment (the trace's own, as replay takes it, under
--deployment and the flags) with some keys varied,
and, with the load key rate, the trace sped up or slowed down to that mean rate
(arrival gaps scaled, the requests unchanged). It prints one row per case (goodput,
SLO attainment, throughput, TTFT, ITL and E2E percentiles, KV use, preemptions,
steady state, GPUs and cost) as a table, CSV or JSON, and answers directly:

  --find min-cost   the cheapest deployment of the grid that serves the trace under
                    --slo, its cost per million output tokens, and the Pareto front of
                    cost against latency (min-gpus: the fewest GPUs)
  --find min-shed   the setting of the grid meeting --slo that rejects the fewest
                    requests, e.g. --grid admission_policy=always-admit,token-bucket
  --find max-rate   the highest rate, as the trace sped up, each deployment sustains
                    under --slo (a search to --precision), with the knee of its curve

A case whose queue grows until the end reached no steady state: it is marked
unstable and none of its latencies is reported. Cases run on every core (--jobs);
--shard I/N runs one slice, and replay sweep merge joins the slices' JSON.
Exit code 3: an SLO that no case meets (the tables are written first).

Examples:

   # How many H100s serve the Azure conversation trace at p99 TTFT under 1 s, and at what cost?
   replay sweep --from azure AzureLLMInferenceTrace_conv.csv --model llama-3.1-70b-instruct \
       --grid tensor_parallel=2,4,8 --grid num_instances=1..4 \
       --slo 'ttft.p99<1s' --find min-cost --html capacity.html

   # How far can this trace grow on 4 replicas before p99 TTFT passes 500 ms?
   replay sweep chat.csv --num-instances 4 --find max-rate --slo 'ttft.p99<500ms'

   # Routing policies against each other on the same traffic:
   replay sweep chat.csv --num-instances 4 --grid routing_policy=round-robin,least-loaded,weighted

` + sweep.HelpTail()

// WorkloadSweepHelp is the --help text of run sweep (RunSweep): a generated workload on
// a grid of deployments and loads.
var WorkloadSweepHelp = `sweep runs the workload of run (a preset, a spec YAML, or flags) on every case of a
grid: the base deployment (flags or --deployment) with some keys varied, at some
loads. It prints one row per case (goodput, SLO attainment, throughput, TTFT, ITL and
E2E percentiles, KV use, preemptions, steady state, GPUs and cost) as a table, CSV
or JSON, the same whatever order the cases ran in, and answers directly:

  --find max-rate   the highest rate each deployment sustains under --slo (a search
                    to --precision, not a dense grid), with the knee of its latency curve
  --find min-cost   the cheapest deployment of the grid meeting --slo at each load,
                    with its cost per million output tokens and the Pareto front of
                    cost against latency (min-gpus: the fewest GPUs)
  --find min-shed   the setting of the grid meeting --slo that rejects the fewest
                    requests, e.g. --grid admission_policy=always-admit,token-bucket

A case that never reaches a steady state (its queue grows until the end) is marked
unstable and no latency of it is reported. Cases run on every core (--jobs); a sweep
too big for one machine fans out with --shard I/N (or N with the index from
$JOB_COMPLETION_INDEX or $SLURM_ARRAY_TASK_ID) and run sweep merge joins the shards.
Exit code 3: an SLO that no case meets (the tables are written first).

Examples:

   # p99 TTFT and goodput of a chatbot on 1 to 4 H100s, 10 to 80 requests/s:
   run sweep --workload chatbot --num-requests 5000 --grid num_instances=1..4 \
       --grid rate=10..80:10 --slo 'ttft.p99<500ms' --html sweep.html

   # The highest rate one H100 serves with p99 TTFT under 500 ms and p99 ITL under 50 ms:
   run sweep --workload chatbot --num-requests 10000 --find max-rate \
       --slo 'ttft.p99<500ms,itl.p99<50ms'

   # The cheapest deployment for 60 requests/s, Llama-3.1-70B on H100 or A100:
   run sweep --workload chatbot --rate 60 --model llama-3.1-70b-instruct \
       --grid gpu=H100,A100-80 --grid tensor_parallel=2,4,8 --grid num_instances=1..4 \
       --slo 'ttft.p99<1s' --find min-cost

   # Eight shards with GNU parallel, then one table:
   parallel run sweep --sweep capacity.yaml --workload chatbot --num-requests 10000 \
       --shard {}/8 --format json -o shard-{}.json ::: 0 1 2 3 4 5 6 7
   run sweep merge shard-*.json

` + sweep.HelpTail()
