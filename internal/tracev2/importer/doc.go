// Package importer turns foreign request traces into TraceV2 records, so that
// `replay` can feed production arrivals and lengths through the simulator.
//
// Five formats are supported, each by its own constructor:
//
//   - NewAzure: Azure LLM inference trace 2023 CSV (TIMESTAMP, ContextTokens,
//     GeneratedTokens), bound by column name with gocarina/gocsv.
//   - NewMooncake: Mooncake (FAST'25) JSONL (timestamp in ms, input_length,
//     output_length, hash_ids of 512-token prefix blocks).
//   - NewVidur: Vidur's processed-trace CSV (arrived_at in s,
//     num_prefill_tokens, num_decode_tokens, optional block_hash_ids).
//   - NewVLLM: the result JSON of `vllm bench serve --save-result
//     --save-detailed` (per-request arrays input_lens, output_lens, ttfts,
//     itls, errors, and in newer releases start_times, latencies, queue_times).
//   - NewLLMServingSim / OpenLLMServingSim: a real vLLM run recorded by
//     LLMServingSim's bench (a directory with requests.jsonl, one request per
//     line with front-end arrival and engine queued/scheduled/first/last
//     token times, and meta.json, the engine settings, parsed by
//     ParseLLMServingSimMeta). Its two clocks are tied by the earliest
//     queued-minus-arrival; it holds the whole run in memory (hundreds of
//     requests) because that tie is a minimum over every request.
//
// # Detection
//
// Detect (and DetectPath, DetectReader) names the format of an input from its
// first 64 KiB, so that a user need not say it: each foreign shape above is
// unmistakable by its column names or JSON keys. TraceV2 is checked first
// and is never taken for a foreign format (a fuzz target holds every input
// package tracev2 reads to that).
//
// # API
//
// Every constructor (or Open with a Format) returns an Importer, a pull
// iterator: Next returns one tracev2.Record at a time and io.EOF after the
// last one; the first error is sticky. Memory stays flat in the number of
// requests (it grows only with the longest row, or for NewVLLM with the
// longest single array element). Constructors read up to the first record, so
// Header — a *tracev2.Header suggestion: mode real, trace_version 3,
// time_unit us, warm_up_requests 0, plus created_at (Azure) or server.type and
// server.model (vllm) — is final when the constructor returns and can be
// written before the first row. Warnings returns non-fatal findings. All
// adapts an Importer to iter.Seq2 for range-over-func loops. Records that
// carry prefix blocks (Mooncake, Vidur with block_hash_ids) need
// tracev2.Columns{HashIDs: true} when written.
//
// # Errors
//
// Bad input gives an *Error whose text is
//
//	file:line:column: field NAME: what is wrong
//
// (or `file:line:column: csv syntax: ...` / `json syntax: ...` when no field
// is involved). Line is the physical 1-based line; for a CSV row it is the line
// where the row starts. Column is, for CSV value errors, the 1-based field
// number (as in the docs/tracev2.md §7) and, for CSV syntax errors, the 1-based
// byte position; for JSON it is the 1-based character position of the
// offending value on its line (a byte offset mapped to line:column). ExitCode
// on *Error returns 2. The first error stops the import: Next keeps returning
// it. Negative, fractional or non-numeric lengths are errors; nothing panics.
//
// # Mapping decisions
//
// Every importer writes status ok (or, for vllm, error when the benchmark
// recorded one), send_time_us = arrival_time_us unless the source measured the
// send, request_id = 0-based record index, and mode `real` in the header.
// Sources without latencies (Azure, Mooncake, Vidur) leave
// first_chunk_time_us, last_chunk_time_us and num_chunks at 0, which means
// "not measured": a replay needs only arrival_time_us, input_tokens and
// output_tokens (plus ext_hash_ids for block-level prefix caching); calibrate
// must not use such rows as latency ground truth. (The tracev2 reader warns
// about such rows — status ok without a first chunk — when it reads them.)
//
// This package knows nothing of the simulator, the CLI or any output format;
// it never writes to stdout or stderr (warnings are returned by Warnings).
package importer
