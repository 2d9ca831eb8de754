// Package fit fits the coefficients of a latency model (blackbox or
// trained-physics, docs/simulator.md §8.1 and §8.3) to a measured trace, so that
// replaying the trace through the simulator reproduces its latencies.
//
// # Method
//
// Every coefficient enters a request's simulated latency linearly once the
// batch composition of every step is known (docs/simulator.md §8.4):
//
//	TTFT = Q(r) + φ·StepTime(s₀) + Σ StepTime(s) + A_tok   steps from enqueue to the first token
//	E2E − TTFT = Σ StepTime(s) + (O − 1)·A_tok + A_end      steps from the first token to the last
//
// where s₀ is the step running when the request was enqueued, φ the part of
// it still to run, and StepTime = β·basis. Fit alternates two moves
// (a fixed-point iteration):
//
//  1. replay the trace with the current coefficients (replay.Simulate, the
//     path `replay` uses), recording each step's start, length and basis
//     terms, and each request's enqueue, first-token and completion times;
//  2. attribute each measured request's TTFT and E2E − TTFT to the steps the
//     replay placed it in, and solve the equations of all requests at once
//     by non-negative least squares (reweighted: see Robustness).
//
// With the right coefficients the replayed batches are the real ones, so the
// truth is a fixed point; from a wrong start each replay's batches are closer
// to the real ones than the last, and a handful of replays suffice, where a
// direct search on per-request error (Nelder–Mead over replays) needs
// hundreds. Non-negativity is a constraint of the solver, as the latency
// models require.
//
// Three things make the equations honest about what a replay cannot know:
//
//   - Phase. A replay with other coefficients puts its step boundaries at
//     other times against the arrivals, so where in s₀ a request arrived is
//     unknown: φ is taken as ½ (its mean for arrivals uniform in the step),
//     and the equation's weight allows for the variance Δ(s₀)²/12. Taking the
//     replay's own φ biases every term that rides on it towards zero.
//   - Weights. Each equation's error is relative (MAPE is what calibrate
//     grades), relative to the equation's prediction at the current
//     coefficients rather than to the measured value, whose noise would
//     otherwise choose the weights.
//   - Noise of the iterates. Because of phase, the iterates do not settle
//     exactly but wander within a small band; the estimate is their mean over
//     the second half of the iterations (Polyak averaging), checked by one
//     more replay. If that replay is worse than the start, the start is kept.
//
// ITL data split each decode into segments of 32 tokens, each an equation;
// single intervals would be blurred by the up-to-one-step offset between
// replayed and real steps. The token times are the output_tokens chunks from
// the one stamped at the first token: chunks that carry no token (a leading
// role-only chunk, Ollama's trailing finish-only and usage-only chunks) are
// left out, and the last segment runs to the last chunk, as E2E does.
//
// # Closed loops
//
// With Config.Replay.ClosedLoop the fit is graded as `replay --session-mode
// closed-loop` replays: later session rounds arrive at the simulated
// completion of the round before plus the think time. The errors reported,
// and the choice of coefficients, come from that replay. The replays that
// give the equations hold a later round until its measured send time as
// well (the later of the two), which keeps their batches on the measured
// ones from both sides: injecting every row at its measured time lets a
// replay a little slower than the server start a user's next round while
// its last one still runs — at four users on four slots with no think time
// the extra request queues and the queue cascades (TTFT MAPE 71 % at the
// start of a measured Ollama run, and no fitted coefficients that beat the
// start) — while a plain closed loop drifts off the measured timeline
// whenever the replay is faster.
//
// A run in which requests really queue for a slot (more users than
// sequences) is fitted only from a start near the truth: the TTFT of a
// queued request is its wait, which the replay reproduces only when its
// completions are the measured ones.
//
// # Robustness
//
// Measured times carry stalls: a busy machine adds tens of milliseconds to
// a few requests. Each solve is iteratively reweighted towards least
// absolute standardised residuals (Huber's weights at one standard error),
// in line with MAPE, the L1 measure calibrate grades, instead of chasing
// the stalls as least squares does. And if the iterates' mean replays worse
// than the start, the replayed iterate that graded best is kept
// (Result.Chosen), or the start if none beat it.
//
// Terms the data cannot separate are tied or held:
//
//   - A_tok (α₂) is added to every token but never delays the server, so it
//     trades one for one with the per-step constant in every equation; only
//     queueing could tell them apart, and the linear equations do not see
//     it. It keeps its starting value unless Config.FitTokenOverhead.
//   - trained-physics: the per-step constants (weights read, per-layer and
//     per-step overhead, MoE layers) are scaled together from their starting
//     ratios; the TP all-reduce term (a combination of the token terms) and
//     β_EP keep their starting values; a weak pull towards the start
//     (Config.Ridge, relative to each column) settles directions the data
//     leave flat, such as prefill compute against prefill KV.
//
// Requests held out (Config.Holdout, chosen by a hash of the seed and the
// request id) are replayed like every other — they are part of the load —
// but their equations are left out; their error is reported apart.
//
// # One loop, and kernel profiles
//
// The iteration (replay, solve, step, keep) is Iterate, whose options
// (Loop) also serve the held-out evaluation's fit of the coefficients
// shared across deployments (internal/fidelity): which iterate is kept,
// damping, the ridge's prior, reweighting. Kernels fits a physics model's
// GPU coefficients to a kernel profile (Profile: per-operation times of a
// profiler) instead of to a trace.
//
// This package must never know flags, files, terminals or report formats:
// it takes records and a resolved deployment and returns coefficients and
// errors. It never imports cmd or internal/cli, and never writes to stdout
// or stderr.
package fit
