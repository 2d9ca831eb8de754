package calibrate

// FitHelp is the --help text of calibrate fit (RunFit).
const FitHelp = `calibrate fit replays real traces (TraceV2, any form; - for stdin) through the
simulator, and fits one set of coefficients of their latency model so that the
replays reproduce the measured TTFT and E2E of every request, and the token times
of an ITL file when it has one chunk per token (NAME.itl.csv beside each trace,
or --itl-data with one trace). Fit light, loaded and saturated runs of a server
together: one set that predicts all of them is what capacity planning needs.

Each trace is replayed as replay would: on the deployment its header states
(x_ext.deployment, else BLIS's server keys) under --deployment and the flags
given (each one that contradicts a trace is a warning; --ignore-trace-deployment
uses the flags alone), with the trace's client (its cap on requests in flight,
from the header or found in the rows; --client-max-concurrency sets it) and in
its session mode. Every trace must use the same latency model.

The physics model (the default) fits the GPU's shares of its peak FLOP/s and
bandwidth, and with several traces the eager per-layer cost too; its other
fixed costs, attention and KV shares and Q and A_end keep their physical
starting values (--fit-alpha frees alphas), which per-request latencies cannot
tell from the shares. blackbox and trained-physics (BLIS's) fit their
coefficients as before. Starting coefficients are --alpha-coeffs/--beta-coeffs,
else the deployment's, else the model's own.

Method: a fixed-point iteration. Each round replays the trace with the current
coefficients, attributes each request's TTFT and decode time to the steps the
replay put it in, and solves for all requests at once by non-negative least
squares on relative errors; the mean of the last rounds is kept. A_tok (alpha[2])
keeps its starting value unless --fit-token-overhead.

Closed loops: with --session-mode closed-loop (as given to replay), the errors
shown, and the choice between the fitted and the starting coefficients, are
those of the closed-loop replay that will grade them; in the replays that give
the equations a later round also waits for its measured send time, which keeps
their batches on the measured ones. Each solve is reweighted towards least
absolute relative error (MAPE's measure), so a few stalled requests do not
pull the coefficients.

Output (-o, default stdout): a deployment YAML with the fitted latency_model,
alpha_coeffs and beta_coeffs and the deployment keys that differ from the
defaults. Give it to run or replay with --deployment FILE; flags given beside
it still override it. stderr: the error before and after the fit (MAPE of TTFT
and E2E as calibrate grades them) and, with --holdout, on the held-out requests.

Exit codes: 0 success, 1 runtime failure, 2 bad usage or invalid input.

Examples:

   # One set of physics coefficients from a light and a saturated capture,
   # then the prediction of a third load, never fitted:
   calibrate fit light.csv saturated.csv --holdout 0.2 -o h100.yaml
   replay medium.csv --deployment h100.yaml --results-path sim.json
   calibrate medium.csv sim.json --fail-under good

   # BLIS's blackbox coefficients for one captured run:
   calibrate fit cap.csv --model qwen3-14b --gpu H100 --latency-model blackbox -o bb.yaml`
