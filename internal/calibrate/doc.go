// Package calibrate is the library half of the calibrate command: it opens
// the inputs of a grade (a real trace, its replay's SimResults and summary,
// ITL data) or of a fit (one or more real traces), writes the outputs, and
// hands the decoded values to internal/report (every statistic and
// rendering) or internal/fit (every replay and solve).
//
// It owns what is about files: which input is stdin (at most one, read
// first), the ITL file found beside a trace, the report files written
// atomically, and the file:line:column of errors in the JSON inputs. It
// never computes a statistic or a coefficient itself, never parses flags
// and never writes to stdout or stderr on its own: the caller gives the
// standard streams and a logger. Its errors carry ExitCode methods (2 for
// bad usage or input, 3 for a failed gate) for main to map.
//
// Opening a trace lives in one file, inputs.go.
package calibrate
