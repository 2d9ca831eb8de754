package input

import (
	"fmt"
	"io"
	"log/slog"
	"os"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// Config says which trace to open and how. The usage errors name the
// flags every command spells the same way: TRACE (Paths), --trace-header,
// --trace-data, --from, --lenient and --strict.
type Config struct {
	// Paths are the traces named as arguments; "-" is stdin. Several are
	// the per-worker traces of one run, merged by time.
	Paths []string
	// HeaderPath and DataPath are the two-file form given apart
	// (--trace-header, --trace-data).
	HeaderPath, DataPath string
	// From forces a foreign format (--from); "" detects it from the content.
	From importer.Format
	// Lenient skips malformed TraceV2 rows with a warning; Strict makes
	// unknown header keys errors.
	Lenient, Strict bool
	// Stdin is read for "-".
	Stdin io.Reader
	// Log takes the warnings and the account of what was found; nil
	// discards them.
	Log *slog.Logger
	// DeploymentKey, if set, checks each value of the header's
	// x_ext.deployment, which is then refused at its place
	// (tracev2.Options).
	DeploymentKey func(key string, value any) error
	// Stream lets a foreign trace be left open, to be read once as it is
	// replayed (Trace.Stream), instead of being spooled first.
	Stream bool
}

// Trace is a trace that has been read and validated whole, and can be read
// again (from its file, or from a spool of stdin or of an import) as many
// times as the caller needs, in constant memory.
type Trace struct {
	Name    string // the trace as messages name it
	Header  *tracev2.Header
	Columns tracev2.Columns
	// Rows reads the rows again, in file order, on the time origin the
	// first reading found. It is nil while Stream is set.
	Rows Rows
	N    int // rows
	// Unique is true when no two rows share a request id.
	Unique bool
	// Spans is true when some row has a send and an end
	// (tracev2.RecordSpan): only then can a client be found in the rows.
	Spans bool
	// Stream, if set, is an import not read yet: the caller reads it as
	// it replays it, or spools it (Spool) to read it the usual way.
	Stream *Stream

	log    *slog.Logger // Config.Log, naming the paths given
	spools []string     // temporary files to remove
	pipes  pipes        // pipes named in the Config
}

// Open reads and validates the trace cfg names: a TraceV2 trace in any
// form, several of them merged by time, or a foreign trace, whose format
// cfg.From names or its content shows (importer.Detect). With cfg.Stream,
// a foreign trace may be left open to be read as it is replayed. The
// caller closes the Trace.
func Open(cfg Config) (t *Trace, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	path := ""
	if len(cfg.Paths) == 1 {
		path = cfg.Paths[0]
	}
	hp, dp := cfg.HeaderPath, cfg.DataPath
	p, err := openPipes(&path, &hp, &dp, &cfg.Stdin)
	if err != nil {
		return nil, err
	}
	log := p.logger(cfg.Log)
	defer func() {
		t, err = p.attach(t, err)
		if t != nil {
			t.log = log
		}
	}()
	if err := cfg.check(path, hp, dp); err != nil {
		return nil, err
	}
	if len(cfg.Paths) <= 1 && path == "" && hp == "" && dp == "" {
		return nil, exitcode.Usagef("no trace: give TRACE, - for stdin, or --trace-header and --trace-data (see --help)")
	}
	opts := cfg.options(log)
	if len(cfg.Paths) > 1 {
		return merge(cfg.Paths, opts, cfg.Stdin, log)
	}
	if cfg.From != "" {
		return importTrace(cfg.From, path, cfg.Stdin, log, cfg.Stream)
	}
	sure := true
	if path != "" {
		d, stdin, err := detect(path, cfg.Stdin)
		if err != nil {
			return nil, err
		}
		cfg.Stdin = stdin
		if d.Format != importer.FormatTraceV2 {
			if hp != "" || dp != "" {
				return nil, exitcode.Usagef("%s is a %s trace: give it alone, without --trace-header/--trace-data", path, d.Format)
			}
			name := path
			if name == "-" {
				name = tracev2.StdinName
			}
			log.Info("trace format detected from its content (--from forces one)", "file", name, "format", string(d.Format), "evidence", d.Why)
			return importTrace(d.Format, path, cfg.Stdin, log, cfg.Stream)
		}
		sure = d.Sure
	}
	t, err = readTrace(tracev2.Input{Path: path, HeaderPath: hp, DataPath: dp, Stdin: cfg.Stdin}, opts, log)
	if err != nil && !sure {
		return nil, &unrecognised{err}
	}
	return t, err
}

// check refuses the forms of cfg that name a trace in two ways; path, hp
// and dp are the single trace, header and data paths.
func (cfg *Config) check(path, hp, dp string) error {
	switch {
	case len(cfg.Paths) > 1 && (hp != "" || dp != "" || cfg.From != ""):
		return exitcode.Usagef("several traces are merged by time: --trace-header, --trace-data and --from take one")
	case cfg.From != "" && (hp != "" || dp != ""):
		return exitcode.Usagef("--from reads one file: give it as TRACE, not --trace-header/--trace-data")
	case cfg.From != "" && path == "":
		return exitcode.Usagef("--from %s: name the file to import, or - for stdin", cfg.From)
	case path != "" && hp != "" && dp != "":
		return exitcode.Usagef("give either TRACE or --trace-header with --trace-data, not both")
	}
	return nil
}

// options are the TraceV2 reader's options cfg asks for, warning on log.
func (cfg *Config) options(log *slog.Logger) tracev2.Options {
	return tracev2.Options{Lenient: cfg.Lenient, Strict: cfg.Strict, Warn: func(m string) { log.Warn(m) }, DeploymentKey: cfg.DeploymentKey}
}

// Close closes an import left open and removes the temporary files.
func (t *Trace) Close() {
	if t.pipes.stdin != nil {
		t.pipes.stdin.Close()
	}
	if t.Stream != nil {
		t.Stream.src.discard()
	}
	for _, p := range t.spools {
		os.Remove(p)
	}
}

// Describe is a one-line account of the trace for the log.
func (t *Trace) Describe() string {
	mode := t.Header.Mode
	if mode == "" {
		mode = "unknown mode"
	}
	return fmt.Sprintf("%s: %d rows (%s)", t.Name, t.N, mode)
}

// Named gives err the paths given for the pipes the trace was read
// through, in place of their stand-ins.
func (t *Trace) Named(err error) error { return t.pipes.named(err) }

// Logger is log renaming the pipes' stand-ins to the paths given, in every
// message and string attribute.
func (t *Trace) Logger(log *slog.Logger) *slog.Logger { return t.pipes.logger(log) }

// detect finds the format of the trace at path ("-": stdin, which is
// returned wrapped so that nothing read is lost). A file that cannot be
// opened is left to the reader, whose error names it.
func detect(path string, stdin io.Reader) (importer.Detection, io.Reader, error) {
	if path == "-" {
		d, r, err := importer.DetectReader(stdin)
		if err != nil {
			return d, nil, fmt.Errorf("read %s: %w", tracev2.StdinName, err)
		}
		return d, r, nil
	}
	d, err := importer.DetectPath(path)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return d, nil, exitcode.Usagef("%v", err)
		}
		return importer.Detection{Format: importer.FormatTraceV2, Sure: true}, stdin, nil
	}
	return d, stdin, nil
}

// hasSpan reports whether rec has a send and an end, what a client is
// detected from: a trace without such rows shows no client and need not
// be read again for one.
func hasSpan(rec *tracev2.Record) bool {
	_, _, _, ok := tracev2.RecordSpan(rec)
	return ok
}
