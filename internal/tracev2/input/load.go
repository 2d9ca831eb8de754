package input

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
)

// Loaded is a trace read whole into memory, its records normalised on one
// time origin, for a consumer that needs every row at once.
type Loaded struct {
	*tracev2.Trace
	// Merge says how several traces were merged (each one's origin and
	// shift, for its companion files); nil for one trace.
	Merge *tracev2.MergeInfo
	ins   []tracev2.Input // the merged traces as given, for their companion files
}

// Load reads the TraceV2 trace cfg names whole into memory, in any form
// Open takes one (a single stream, the two-file form, stdin, a pipe,
// gzip), or several merged by time. Each input is read once, so nothing
// is spooled. Foreign traces are imported row by row (Open): Load refuses
// cfg.From and ignores cfg.Stream. It logs the readers' and the merge's
// warnings on cfg.Log; the account of what it read is the caller's, and so
// are request ids given twice, which a consumer names its own way
// (tracev2.Trace.IndexByID names both lines).
func Load(cfg Config) (*Loaded, error) {
	path, err := cfg.begin()
	if err != nil {
		return nil, err
	}
	if cfg.From != "" {
		return nil, exitcode.Usagef("--from %s: an imported trace is read row by row, not loaded whole", cfg.From)
	}
	opts := cfg.options(cfg.Log)
	if len(cfg.Paths) > 1 {
		return loadMerged(cfg.Paths, opts, cfg.Stdin, cfg.Log)
	}
	in := tracev2.Input{Path: path, HeaderPath: cfg.HeaderPath, DataPath: cfg.DataPath, Stdin: cfg.Stdin}
	tr, err := tracev2.Load(in, opts)
	if err != nil {
		return nil, err
	}
	if tr.Skipped > 0 {
		cfg.Log.Warn("malformed rows skipped (--lenient)", "rows", tr.Skipped)
	}
	return &Loaded{Trace: tr}, nil
}

// loadMerged reads several traces of one run (the per-worker traces of a
// sharded observe) whole and merges them by time on one origin
// (tracev2.LoadMerged), logging the merge's warnings.
func loadMerged(paths []string, opts tracev2.Options, stdin io.Reader, log *slog.Logger) (*Loaded, error) {
	ins := make([]tracev2.Input, len(paths))
	for i, p := range paths {
		ins[i] = tracev2.Input{Path: p, Stdin: stdin}
	}
	tr, info, err := tracev2.LoadMerged(ins, opts)
	if err != nil {
		return nil, err
	}
	for _, w := range info.Warnings {
		log.Warn(w)
	}
	return &Loaded{Trace: tr, Merge: info, ins: ins}, nil
}

// ITLBeside is the ITL file observe writes beside a trace it writes as
// NAME, NAME.itl.csv, when cfg names one trace by its path (its data path,
// else its path, else its header path) and that file exists; "" otherwise.
func (cfg *Config) ITLBeside() string {
	if len(cfg.Paths) > 1 {
		return ""
	}
	in := tracev2.Input{HeaderPath: cfg.HeaderPath, DataPath: cfg.DataPath}
	if len(cfg.Paths) == 1 {
		in.Path = cfg.Paths[0]
	}
	return siblingITL(in)
}

// siblingITL is NAME.itl.csv beside the trace in names, when it exists as
// a regular file; "" otherwise, and for stdin.
func siblingITL(in tracev2.Input) string {
	base := in.Path
	if in.DataPath != "" {
		base = in.DataPath
	} else if base == "" {
		base = in.HeaderPath
	}
	if base == "" || base == "-" {
		return ""
	}
	dir, file := filepath.Split(base)
	file = strings.TrimSuffix(file, ".gz")
	if strings.HasSuffix(file, ".itl.csv") {
		return ""
	}
	if ext := filepath.Ext(file); ext != "" {
		file = strings.TrimSuffix(file, ext)
	}
	p := filepath.Join(dir, file+".itl.csv")
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}

// ReadITL reads the ITL CSV at path ("-": stdin) on the trace's time
// origin.
func (l *Loaded) ReadITL(path string, stdin io.Reader) ([]tracev2.ITLRow, error) {
	return readITL(path, stdin, l.Origin, 0)
}

// MergedITL reads the ITL files beside merged traces (each worker's
// NAME.itl.csv), each on its own trace's origin and shifted onto the
// merged one. It reads none when some trace has none, as ITL data of part
// of a run would mislead: missing is then the index in Merge.Parts of the
// first trace without one, else -1.
func (l *Loaded) MergedITL() (rows []tracev2.ITLRow, missing int, err error) {
	for i, part := range l.Merge.Parts {
		p := siblingITL(l.ins[i])
		if p == "" {
			return nil, i, nil
		}
		more, err := readITL(p, nil, part.Origin, part.ShiftUs)
		if err != nil {
			return nil, -1, err
		}
		rows = append(rows, more...)
	}
	return rows, -1, nil
}

// readITL reads the ITL CSV at path ("-": stdin) on origin o, shifted by
// shiftUs.
func readITL(path string, stdin io.Reader, o tracev2.Origin, shiftUs int64) ([]tracev2.ITLRow, error) {
	rc, name, err := OpenFile(path, stdin)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	rows, err := tracev2.ReadITL(rc, name, o)
	if err != nil {
		return nil, err
	}
	for k := range rows {
		rows[k].TimestampUs += shiftUs
	}
	return rows, nil
}

// Scanned is what Scan read of a trace.
type Scanned struct {
	Name   string
	Header *tracev2.Header
	// Origin is the time origin of the rows read (the whole trace's when
	// Scan read to the end): the rows were handed over as the file holds
	// them, and the consumer normalises them with it.
	Origin tracev2.Origin
	// Complete is true when Scan read to the end of the trace.
	Complete bool
}

// Scan reads the TraceV2 trace cfg names once, in any form Load takes one
// but several, handing each row to fn in file order until fn returns
// stop, the trace ends, or a row is malformed. Memory does not grow with
// the trace, and a trace that never ends (a pipe) can be read as far as
// fn needs. Rows are not normalised: Scanned.Origin is their origin.
func Scan(cfg Config, fn func(*tracev2.Record) (stop bool)) (*Scanned, error) {
	path, err := cfg.begin()
	if err != nil {
		return nil, err
	}
	if cfg.From != "" || len(cfg.Paths) > 1 {
		return nil, exitcode.Usagef("a scan reads one TraceV2 trace (no --from, no merge)")
	}
	in := tracev2.Input{Path: path, HeaderPath: cfg.HeaderPath, DataPath: cfg.DataPath, Stdin: cfg.Stdin}
	r, h, err := tracev2.Open(in, cfg.options(cfg.Log))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	s := &Scanned{Name: r.Name(), Header: h}
	var rec tracev2.Record
	for {
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			s.Complete = true
			break
		}
		if err != nil {
			return nil, err
		}
		if fn(&rec) {
			break
		}
	}
	if r.Skipped() > 0 {
		cfg.Log.Warn("malformed rows skipped (--lenient)", "rows", r.Skipped())
	}
	if s.Origin, err = r.OriginSoFar(); err != nil {
		return nil, err
	}
	s.Header = r.Header() // a single stream's trailer is merged at its end
	return s, nil
}

// begin gives a Config without a logger one that discards, and checks
// its inputs: path is its one trace path ("" for none or several).
func (cfg *Config) begin() (path string, err error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Paths) == 1 {
		path = cfg.Paths[0]
	}
	return path, cfg.check(path, cfg.HeaderPath, cfg.DataPath)
}
