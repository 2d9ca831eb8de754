// Package workload turns a workload description — a BLIS WorkloadSpec v2
// YAML file, a named preset, or command-line options — into a seeded, lazy
// stream of requests (spec: docs/workload.md). observe sends the
// stream to a live server and run sends it to the simulator, so one spec and
// seed mean the same requests on both sides.
//
// It must never know about the simulator, HTTP, reading or writing trace
// files, flag parsing or the terminal: it describes its flags (Flags, as
// flagspec values) and maps the values given onto Options (FromFlags),
// states the client it describes in a trace header's terms
// (Workload.Client), writes nothing to stdout or stderr (warnings are
// returned) and reads no clock. Callers report completions back to it.
//
// # Entry points
//
// Resolve(Options) builds a *Workload from a spec file, a preset or flags;
// Decode/Load parse a spec; New(Spec) validates and compiles one built in
// code. Workload.NewSource starts the lazy stream; Workload.Eager builds the
// same pre-generated requests at once.
//
// # Random streams
//
// Stream(name) = PCG(s, s XOR 0xda3e39cb94b95bdb) with s = seed XOR
// FNV-1a-64(name) (NewStream). "workload-gen" draws one 64-bit seed per
// client in spec order: appending a client changes no other client's
// requests (inserting one shifts the seeds of the clients after it). From
// its client stream each request draws, in order: the inter-arrival time,
// the input length, the output length, the reason ratio (when the client
// has a reason_ratio_distribution) and one token seed. A session (a
// multi-turn session or a concurrency user) draws one seed from its
// client's stream when it starts (users in user order) and then draws every
// round from its own stream in the same order (input, output, ratio, token
// seed), so rounds created by completions never disturb other draws.
// Prefix group g's tokens come from the token stream seeded by
// StreamSeed(seed, "prefix/"+g).
//
// # Token ids
//
// A request's ids come from a dedicated PCG seeded by its token seed (see
// tokenStream): each 64-bit output gives two ids, low half then high half,
// each as x·128000 >> 32. A round's stream yields its new input ids first;
// its output ids, needed only when the next round accumulates context, are
// the ids that follow: output id j of round k is id in_k + j of round k's
// stream. So the output ids of any round can be rebuilt from (token seed,
// input length) for whatever count the server generated — Request.OutputIDs
// does it, so a simulator can hand its KV cache the very ids the next round
// will resend — and a replay that only preserves structure (the token-ids
// stream of docs/simulator.md §13) needs none of them.
// The prompt is the group prefix followed by the input ids; for round k + 1
// of an accumulating session it is round k's whole prompt, then round k's
// generated output ids, then round k + 1's new input ids (InputTokens counts
// all but the group prefix, as the trace's input_tokens does).
//
// # Merging, numbering and num_requests
//
// Every client generates in arrival order with one draft pending; a heap
// merges them by (arrival, client spec order), generation order breaking
// ties inside a client. Requests are numbered 0, 1, 2, … as Next returns
// them. num_requests counts slots: each request takes one, except that a
// closed-loop multi-turn session takes max_rounds slots when it starts (its
// reservation; the last session admitted may get fewer, and reaching its
// reservation ends it budget-exhausted). Generation stops when the slots
// are used up. Follow-ups of concurrency users share what is left:
// num_requests − pre-generated. So the total never exceeds num_requests,
// and a spec with num_requests but no horizon still gets its later rounds
// (a literal "truncate the session starts to num_requests" would leave no
// budget for them).
//
// Follow-ups (closed-loop rounds, concurrency requests) are numbered after
// every pre-generated request, in creation order: id = P + k, where P is
// the pre-generated count. A lazy stream does not know P while it runs, so
// the first follow-up triggers a counting pass: a second, private Source
// over the same workload that runs the merge without materialising token
// ids or sessions (constant memory; about 150 ns a request, so it matters
// only for horizon-bound runs of many millions of requests). This is exact because token ids come from per-request seeds and
// never shift other draws. Ids therefore depend only on the workload and on
// the order of OnComplete/OnFailed calls, which the simulator makes
// deterministic. Pregenerated exposes P (e.g. for a progress bar).
//
// # Horizon
//
// An arrival at the horizon is generated; one after it is not. A follow-up
// that would arrive after it ends its session horizon-interrupted.
//
// # Sessions
//
// A multi-turn client starts a session at each arrival (one session in all
// with single_session). closed_loop true (the default): only round 0 is
// pre-generated; OnComplete(id, last-chunk time, generated tokens) returns
// round k + 1 arriving think time later. closed_loop false: every round is
// pre-generated at start + k·think and sent whatever happens (like replay's
// fixed session mode). Concurrency users (docs/workload.md §8) are endless sessions: a
// follow-up after each completion or failure, think time later. Session
// ids: "sess_<id of round 0>", "concurrency_<client>_user_<u>".
//
// Every started session ends in exactly one terminal state (SessionCounts,
// OnSessionEnd): completed (all rounds ran; for open sessions none failed),
// cancelled (a closed-loop round failed; an open session with a failed
// round; a prompt that would pass MaxPromptTokens), horizon-interrupted (a
// round would arrive after the horizon, or the run ended first: Finish),
// budget-exhausted (num_requests allowed no more rounds). A user whose first
// request was never generated never started.
//
// # Windows, cohorts, stages, ramps (beyond docs/workload.md §1)
//
// Every key of BLIS's WorkloadSpec v2 is accepted except servegen_data (it
// needs ServeGen's data files; it is an error saying so). A client's
// lifecycle windows become disjoint phases (where windows overlap, the
// earlier-listed one's rate and shapes apply): the client draws its
// arrivals inside a phase at the phase's rate, and a draw that falls past
// the phase's end is dropped, the process starting afresh at the next
// phase. A session starts inside a window and then runs to its end
// (Deviation: BLIS drops the rounds that fall outside the windows). Rates:
// an always-on client gets aggregate_rate × its fraction of all rate-based
// clients' fractions; a window gets aggregate_rate × its weight (its
// trace_rate, else its client's rate_fraction) over the weights of the
// windows co-active with it (each other windowed client's first
// overlapping window, and every always-on client); with aggregate_rate 0
// every window gives its own rate (trace_rate, requests/s). Cohorts,
// inference_perf stages and multimodal inputs are expanded as cohort.go,
// inferenceperf.go and multimodal.go say; rate_ramp (Ours) and the
// --ramp-up-* flags ramp the total rate over num_requests (ramp.go).
// Windowed clients are bounded by their last window, so a spec of them
// needs no num_requests or horizon.
//
// # Empirical files
//
// An empirical distribution's `file:` (relative to the spec's directory) is
// either a PMF — one "<token count> <weight>" pair a line — or a list of
// observed lengths, one integer a line, each observation weighing 1. Fields
// may be separated by commas, semicolons, tabs or spaces; blank lines and
// lines starting with '#' are skipped, as is a first line of column names
// (e.g. "tokens,probability"). The two forms must not mix in one file.
// Weights need not sum to 1; zero weights are dropped, a negative one is an
// error.
//
// # Limits
//
// Length samples are capped at MaxSampleTokens, accumulated prompts at
// MaxPromptTokens, users per client at MaxConcurrency, times at 2^60 µs, so
// no spec can make the generator exhaust memory or overflow.
package workload
