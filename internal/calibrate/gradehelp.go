package calibrate

import "servesim/internal/report"

// GradeHelp is the --help text of calibrate (Run): a real trace graded
// against its simulation.
var GradeHelp = `calibrate pairs each request of a real trace (TraceV2 in any form: one stream,
header YAML + data CSV, gzip) with its simulated result (replay's SimResult JSON,
array or JSON Lines) and reports, per metric (TTFT, E2E, ITL, TPOT), MAPE, Pearson r,
bias, percentiles and a grade, goodput against SLO targets, the hit-rate and config
verdicts, and whether the real run itself was fit to judge by (saturated, client
lag, truncation, warm cache, cold start). The config verdict compares the deployment
the trace's header states with the one the simulation ran (replay --metrics-out,
given as --sim-metrics), key by key; every output shows both side by side with the
differences marked, and the HTML page opens with the grade, the validity and the
config match. stdout carries one of text (default), JSON
or Markdown; --report, --markdown and --html write files atomically. '-' reads stdin,
for at most one input. An ITL file NAME.itl.csv beside the trace is used when found.

Exit codes: 0 success, 1 runtime failure, 2 bad usage or invalid input (located as
file:line:column), 3 a gate failed (every requested output is written first).

To fit the simulator to the trace instead of grading it, see calibrate fit --help:

   calibrate fit cap.csv --latency-model blackbox --holdout 0.2 -o coeffs.yaml

To compare two real runs (did the upgrade help?), see calibrate compare --help:

   calibrate compare before.csv after.csv --assert 'ttft.p99:regress'

To compare the real engine steps, read from the chunk times, with the latency
model's step times, see calibrate steps --help:

   calibrate steps cap.csv --format markdown -o steps.md

Example: capture a live server, replay the capture, grade the simulator in CI.

   observe --url http://127.0.0.1:8000 --model qwen3-14b --workload chatbot --rate 4 \
           --num-requests 200 --record-itl --trace-output cap
   replay cap.csv --results-path sim.json --metrics-out sim-metrics.json
   calibrate cap.csv sim.json --sim-metrics sim-metrics.json --html report.html \
             --markdown "$GITHUB_STEP_SUMMARY" \
             --assert 'ttft.mape<15%,e2e.pearson>0.9,grade>=good,valid==true,config.match==true'

The same through a pipe (calibrate reads stdin first, so cap.trace is complete):

   observe --url http://127.0.0.1:8000 --model qwen3-14b --workload chatbot --rate 4 -o - \
     | tee cap.trace | replay - --model qwen3-14b --results-path - \
     | calibrate real=cap.trace sim=- --format markdown

Gates (--assert; --fail-under, --max-mape and --min-pearson are shorthands):

` + Indent(report.GateGrammar, "   ")
