// Package input opens the traces a command is given, in every form a user
// may give one: a TraceV2 trace (a single stream, the two-file form, stdin,
// gzip), a foreign trace imported by its detected or forced format
// (internal/tracev2/importer), several per-worker traces merged by time,
// and any of these through a named pipe, which is read once only.
//
// Open reads and validates the whole trace before a command writes
// anything, and returns a Trace whose rows can be read again as often as
// the caller needs, in constant memory: from the file itself, or from a
// temporary spool of stdin, of a pipe, of an import or of a merge. A
// foreign trace may instead be left open (Config.Stream), to be read once
// as it is replayed (Stream); what streaming assumes is checked row by row
// and the caller falls back to a spool (Trace.Spool) when it does not hold.
//
// Load reads a TraceV2 trace, or several merged by time, whole into memory
// instead, each input once, for a consumer that needs every row at once;
// the ITL file observe writes beside a trace (NAME.itl.csv) is found and
// read on the trace's time origin (Config.ITLBeside, Loaded.ReadITL), and
// beside every merged trace on its own origin and shift
// (Loaded.MergedITL). Scan reads one TraceV2 trace once, row by row, as
// far as its consumer needs (a window of a trace that may never end).
// OpenFile opens any other file a user names, "-" being stdin.
//
// Messages and errors name the paths the user gave, never the stand-ins
// (a pipe's copy, the stdin spool): Trace.Named and Trace.Logger rename
// them. Errors of bad input or usage carry ExitCode 2.
//
// The package knows TraceV2 and the importers, and nothing of the
// simulator or of the command line: it takes a typed Config, logs through
// the slog.Logger it is given and never writes to stdout or stderr.
package input
