// Package abtest compares two real runs of a server, A and B: did B get
// faster or slower, by how much, and is that more than the measurement
// could have made up on its own?
//
// When both runs played the same schedule (the same request ids at the
// same arrival offsets with the same prompt lengths, as observe --trace
// or the same spec and seed give), requests are paired and the paired
// bootstrap resamples the pairs; otherwise each side is resampled on its
// own. For TTFT, TPOT and E2E (p50, p90, p99, mean), output and request
// throughput and goodput, it states both values, B's relative difference
// from A with a seeded percentile-bootstrap confidence interval, and a
// verdict against the noise floor: the larger of the client's self-test
// error recorded in the traces' headers and the spread between the
// repeats of one side. It also compares the two deployments key by key,
// evaluates the --assert gates, and renders text, JSON, Markdown and
// HTML with both runs' CDF curves.
//
// It reads no file and knows no simulator, HTTP or command line: the
// caller (internal/calibrate) opens the traces and gives the records.
package abtest
