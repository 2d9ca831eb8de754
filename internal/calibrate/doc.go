// Package calibrate is the library half of the calibrate command: it opens
// the inputs of a grade (a real trace, its replay's SimResults and summary,
// ITL data), of a fit (one or more real traces) or of a comparison (two
// real runs, each with its repeats), writes the outputs, and hands the
// decoded values to internal/report (every statistic and rendering),
// internal/fit (every replay and solve) or internal/abtest (the A/B
// statistics and their renderings).
//
// It owns what is about calibrate's files: which argument names which
// input, which input is stdin (at most one, read first), the report files
// written atomically, and the file:line:column of errors in the JSON
// inputs. The traces themselves, one or several merged by time, and the
// ITL files beside them are opened by internal/tracev2/input, as every
// command opens them. It never computes a statistic or a coefficient
// itself, never parses flags and never writes to stdout or stderr on its
// own: the caller gives the standard streams and a logger. Its errors
// carry ExitCode methods (2 for bad usage or input, 3 for a failed gate)
// for main to map.
package calibrate
