package verify

// Help is the --help text of observe verify (Run).
const Help = `observe verify answers "is the plan true on my server?". PLAN is the JSON of
run sweep --find max-rate --slo ... --format json for one deployment; give the
workload and deployment flags the sweep was given (the plan's model, GPU,
parallelism, latency model, preset and seed are read from it). It checks the plan
and that the server serves its model before sending anything, then probes the
server at --probes rates around the predicted max rate (observe --rates levels of
--probe-requests requests, stopped early when over-saturated; their traces are
PREFIX-<k>-<rate>.csv and PREFIX.probes.json, -o PREFIX, default verify), fits
the latency model on the probes (calibrate fit), searches the max rate again on
the fitted model (run sweep), and prints one page: predicted, measured and
corrected capacity, the fitted coefficients beside the plan's, and whether the
plan holds. A GPU share (FLOP/s or bandwidth) is stated to ±10%.

Examples:

   # Plan on the simulator, then check it against the local server:
   run sweep --workload chatbot --num-requests 2000 --find max-rate \
       --slo 'ttft.p99<500ms' --format json -o plan.json
   observe verify plan.json --url http://127.0.0.1:8000 -o probe --format markdown

Exit codes: 0 the page was written (whether or not the plan holds), 1 runtime
failure, 2 bad usage or invalid input (a PLAN that is no max-rate answer, has
no answer, or names a model the server does not serve).`
