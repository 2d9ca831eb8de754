// Package fidelity measures how well the simulator predicts real vLLM runs,
// and keeps it honest: every run is predicted from coefficients fitted on
// the other runs, never on itself.
//
// # Inputs
//
// Real runs recorded by LLMServingSim's bench (requests.jsonl and meta.json,
// imported by tracev2/importer's llmservingsim format) and the layerwise
// kernel profiles of the same GPUs and models (LLMServingSim's profiler
// CSVs). The GPUs' data-sheet figures and the configs of models the
// simulator does not embed are in data/ (see data/hardware.json and
// data/models/README.md for where every number comes from).
//
// # Method
//
//  1. Deployment: meta.json gives model, GPU, TP, DP, max_num_seqs,
//     max_num_batched_tokens, block size, KV blocks (computed from GPU
//     memory when the run does not record them) and max_model_len
//     ([Deployment]); data-parallel ranks are folded into one instance
//     stepping in lockstep, as vLLM's expert-parallel ranks do (a cluster
//     of independent instances, each reading all the experts its tokens
//     touch, put the Qwen3-30B-A3B run's TPOT 19% and TTFT MAPE 30% off).
//  2. Kernel fit: the deployment's physics latency model
//     (des/latency.Physics, the default) gets its GPU coefficients by
//     non-negative least squares against the run's kernel profile, group
//     by group: dense GEMMs by token count, attention for mixed
//     prefill/decode batches, LM head and sampler by sequences, MoE by
//     tokens and experts (fit.Kernels). A profile is a measurement of the
//     hardware, not of the run.
//  3. Universal fit: host time per step and per request, the inter-GPU
//     link (bytes and per-collective latency) are shared by every
//     deployment of the software stack; [FitUniversal] fits them on a set
//     of runs by alternating replays with a non-negative least-squares
//     solve of every request's TTFT and decode time, attributed to steps
//     through internal/fit's StepLog, in internal/fit's one fixed-point
//     loop (fit.Iterate). Its options differ from calibrate's fit
//     (FitAll): its unknowns are shared by deployments whose kernel
//     coefficients differ, each step's phase is the replay's own from the
//     queued time (FitAll takes half a step with its variance), equations
//     are weighted by the measured value without reweighting (FitAll: by
//     the prediction, then reweighted towards least absolute error), each
//     solve is pulled towards the iterate replayed and the step goes half
//     way (fit.Loop's RidgeToCurrent and Damping), the best-replaying
//     iterate is kept (fit.KeepBest; FitAll keeps the iterates' mean), and
//     the objective includes the mean TPOT.
//  4. Clocks: vLLM reads new requests between steps and stamps queued_ts
//     there, while the next step (already scheduled: asynchronous
//     scheduling) runs, so a request's measured TTFT is the rest of that
//     step plus its own. The replay injects each request at its queued_ts,
//     which falls anywhere in a simulated step; every simulated TTFT and
//     E2E is therefore counted from the start of the simulated step in
//     flight at the arrival (or the arrival, if the engine was idle). The
//     step in flight could not take the request either way, so the
//     simulation itself is unchanged; this replaces a fixed queue delay
//     (Q, half a mean step), which left each request's phase in its step
//     as noise: on the Qwen3-30B-A3B run, where 85% of the requests never
//     queue and their TTFT is about two steps, it was most of the error.
//  5. [Evaluate]: for each run, the universal fit on all the other runs,
//     one replay of the run, and calibrate's statistics (report.Build):
//     TTFT, TPOT and E2E means, p50/p90/p99 and request-level MAPE and
//     Pearson r, plus a breakdown of where the error arises ([Sources]:
//     TTFT split at the first schedule into queueing and first-token
//     error, decode, load, KV use and preemptions). [WriteMarkdown] renders
//     it; [WriteDeployment] writes each run's deployment, coefficients
//     included, as the YAML `replay --deployment` takes (data/deployments/),
//     so the replays can be reproduced with the binaries (whose TTFT counts
//     from the arrival, see 4).
//  6. Unfitted defaults and intervals: each run is replayed once more on
//     its deployment with no coefficients at all (the physics model's
//     defaults for its GPU: what a planner gets for hardware nobody
//     measured), graded the same way. Each of the two replays also runs
//     at step-time scale 1 ∓ z·σ (deploy.IntervalScale), and calibrate's
//     coverage (report.Build with SimLo and SimHi) says how often the real
//     TTFT and E2E fall inside, per run, pooled and per load regime (each
//     regime's rows graded on their own): σ is the fit's, as `calibrate
//     fit` would record it from the training runs, pooled and by each load
//     of 30 requests or more the replays met, the largest
//     ([FitResult.StepTimeSigma]); or, for the unfitted replay, the same
//     rule over the other runs' unfitted replays ([UnfittedSigma]; over
//     all of them it is the physics model's documented default,
//     latency.DefaultStepTimeSigma).
//
// Fits are bit-for-bit repeatable: sums run in a fixed order (never over a
// map), there is no concurrency and no randomness beyond the replay's
// seed, so the committed deployments are what `-update` writes on any
// machine.
//
// # Command entry
//
// `make fidelity` runs TestFidelityReport, which prints the Markdown
// report. It is a test rather than a subcommand because its inputs are the
// development checkout's ../shared/data, which users of the binaries do not
// have (the test skips, saying why, when they are absent), and because the
// same run is the regression test that keeps the overall figures from
// getting worse; users reproduce any one run with the binaries and the
// committed deployment YAML:
//
//	replay --from llmservingsim ../shared/data/llmservingsim/bench/examples/RTX4090/Llama-3.1-8B \
//	    --deployment internal/fidelity/data/deployments/RTX4090_Llama-3.1-8B.yaml --results-path sim.json
//
// This package must never know flags, terminals or output streams: it
// takes paths and returns reports, and writes only to the io.Writer it is
// given. It knows the simulator only through deploy, replay, latency, the
// instance's results and the replay summary (des/instance, des/metrics),
// and report.
package fidelity
