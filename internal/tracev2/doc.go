// Package tracev2 is the shared language of the suite: the TraceV2 trace
// (header YAML + data CSV, in the two-file or the single-stream form), the
// ITL CSV and the SimResult JSON of docs/tracev2.md, compatible with BLIS
// trace_version 2 and 3.
//
// Reading. Open resolves what the command line names (a path, "-" for stdin,
// --trace-header/--trace-data), detects the form from the first non-blank
// line, decompresses gzip, drops a byte-order mark, and returns a Reader that
// yields one Record at a time in constant memory. Columns are bound by name,
// so every BLIS layout loads. Every malformed input is an *Error whose text
// is one line, "file:line:column: column NAME: what is wrong", and whose
// ExitCode is 2; Options.Lenient skips bad rows instead.
//
// Time origin. Times are returned as the file holds them. BLIS observe
// writes Unix-epoch send and chunk times beside offset arrivals; the Reader
// classifies every time column as it streams (a column mixing the two is an
// error on the first offending line) and, after the last row, gives the
// Origin (rule and E0) that puts every time on t = 0 at the workload start.
// Consumers that index the trace use ReadAll or Load, which normalise.
// Streaming consumers of a file make a first pass with ScanOrigin and call
// Reader.Normalize on the second; a trace whose header says
// x_ext.time_origin: relative (Header.OffsetsOnly, every trace we write) can
// be streamed in one pass.
//
// Writing. Writer emits the data CSV (27 core columns in BLIS's order, the
// optional columns chosen up front in Columns, our ext_ columns last), one
// whole row per Write call to the underlying writer, so an interrupted
// producer leaves a valid trace. TraceWriter adds the header: as "# " lines
// and a "#+ " trailer for a single stream (NewStreamWriter), or as an
// atomically rewritten YAML file beside the CSV (CreateFiles).
//
// Deployment and client. A trace is the product of a server and a client,
// so its header says what both were: BLIS's server keys (model,
// tensor_parallel, max_num_seqs, block_size, gpu_memory_utilization,
// max_model_len) where BLIS has one, and in x_ext the whole deployment
// (x_ext.deployment, the keys of a deployment YAML), the client
// (x_ext.client: concurrency cap, closed-loop users, think time, arrival
// process, rate, streaming), what the server reported of itself
// (x_ext.server_info) and where each fact came from (x_ext.sources:
// measured, declared, derived or absent). Header.Deployment and
// SetDeployment are the one mapping between the two places.
//
// x_ext in every header: a trace that does not say which deployment and
// client made it would be replayed on the wrong server without a word, so
// every writer puts x_ext in the header (docs/tracev2.md §2, §3). A header
// that BLIS's strict loader accepts is one flag away
// (--blis-compatible-header, withExt false in CreateFiles): it then holds
// only BLIS's keys, and x_ext goes to the sidecar NAME.ext.yaml beside
// NAME.yaml, which our readers merge back into a header that has no x_ext
// of its own, so nothing is lost. The single-stream form always carries
// x_ext.
//
// Why the trace CSV is parsed by hand: the reader must sustain more than a
// million rows per second with at most two allocations per row, report the
// physical line and field of every error, accept header and trailer lines
// around the CSV, and intern repeated strings. encoding/csv allocates every
// record's strings and gocsv adds reflection per field, each several times
// slower, so the hot path is a field splitter over a reused buffer with
// allocation-free number parsing. gocsv, the mandated name-binding library,
// reads and writes the ITL CSV, where speed matters less.
//
// The package must never know the simulator, HTTP, the CLI or any other
// internal package: it is a leaf that every binary shares. It never writes
// to stdout or stderr; warnings go to Options.Warn.
package tracev2
