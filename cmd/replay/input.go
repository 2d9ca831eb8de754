package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
	"servesim/internal/replay"
	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// input is a trace that has been read and validated whole, and can be
// read again (from its file, or from a spool of stdin or of an import)
// as many times as the replay needs, in constant memory.
type input struct {
	name   string
	header *tracev2.Header
	cols   tracev2.Columns
	rows   replay.Rows // on the simulation's time origin
	n      int
	unique bool     // no two rows share a request id (replay.Config.UniqueIDs)
	spans  bool     // some row has a send and an end: a client may be detected (hasSpan)
	spools []string // temporary files to remove
	// stream, if set, is an import not read yet (rows is nil): the
	// replay may read it as it simulates (replayStreamed), or spool it
	// (spoolStream).
	stream *streamedImport
	pipes  pipes // pipes named on the command line (pipes.go)
}

// hasSpan reports whether replay.DetectClient counts rec (it has a send
// and an end): a trace without such rows shows no client and need not be
// read again for one.
func hasSpan(rec *tracev2.Record) bool {
	_, _, _, ok := tracev2.RecordSpan(rec)
	return ok
}

// close closes an import left open and removes the temporary files.
func (in *input) close() {
	if in.pipes.stdin != nil {
		in.pipes.stdin.Close()
	}
	if in.stream != nil {
		in.stream.src.discard()
	}
	for _, p := range in.spools {
		os.Remove(p)
	}
}

// loadInput reads and validates the trace the command line names: a
// TraceV2 trace in any form, or a foreign trace, whose format --from names
// or its content shows (importer.Detect). With stream, a foreign trace may
// be left open to be read as it is replayed (importInput).
func loadInput(c *ucli.Context, stdio cli.IO, log *slog.Logger, stream bool) (in *input, err error) {
	args := c.Args().Slice()
	path := ""
	if len(args) == 1 {
		path = args[0]
	}
	hp, dp := c.String("trace-header"), c.String("trace-data")
	p, err := openPipes(&path, &hp, &dp, &stdio)
	if err != nil {
		return nil, err
	}
	defer func() { in, err = p.attach(in, err) }()
	log = p.logger(log)
	if len(args) > 1 {
		if hp != "" || dp != "" || c.String("from") != "" {
			return nil, cli.Usagef("several traces are merged by time: --trace-header, --trace-data and --from take one")
		}
		opts := tracev2.Options{Lenient: c.Bool("lenient"), Strict: c.Bool("strict"), Warn: func(m string) { log.Warn(m) }}
		return mergeInputs(args, opts, stdio.In, log)
	}
	if from := c.String("from"); from != "" {
		if hp != "" || dp != "" {
			return nil, cli.Usagef("--from reads one file: give it as TRACE, not --trace-header/--trace-data")
		}
		if path == "" {
			return nil, cli.Usagef("--from %s: name the file to import, or - for stdin", from)
		}
		return importInput(importer.Format(from), path, stdio.In, log, stream)
	}
	if path == "" && hp == "" && dp == "" {
		return nil, cli.Usagef("no trace: give TRACE, - for stdin, or --trace-header and --trace-data (see --help)")
	}
	if path != "" && hp != "" && dp != "" {
		return nil, cli.Usagef("give either TRACE or --trace-header with --trace-data, not both")
	}
	sure := true
	if path != "" {
		d, stdin, err := detect(path, stdio.In)
		if err != nil {
			return nil, err
		}
		stdio.In = stdin
		if d.Format != importer.FormatTraceV2 {
			if hp != "" || dp != "" {
				return nil, cli.Usagef("%s is a %s trace: give it alone, without --trace-header/--trace-data", path, d.Format)
			}
			name := path
			if name == "-" {
				name = cli.StdinName
			}
			log.Info("trace format detected from its content (--from forces one)", "file", name, "format", string(d.Format), "evidence", d.Why)
			return importInput(d.Format, path, stdio.In, log, stream)
		}
		sure = d.Sure
	}
	opts := tracev2.Options{Lenient: c.Bool("lenient"), Strict: c.Bool("strict"), Warn: func(m string) { log.Warn(m) }}
	in, err = readTrace(tracev2.Input{Path: path, HeaderPath: hp, DataPath: dp, Stdin: stdio.In}, opts, log)
	if err != nil && !sure {
		return nil, &unrecognised{err}
	}
	return in, err
}

// detect finds the format of the trace at path ("-": stdin, which is
// returned wrapped so that nothing read is lost). A file that cannot be
// opened is left to the reader, whose error names it.
func detect(path string, stdin io.Reader) (importer.Detection, io.Reader, error) {
	if path == "-" {
		d, r, err := importer.DetectReader(stdin)
		if err != nil {
			return d, nil, fmt.Errorf("read %s: %w", cli.StdinName, err)
		}
		return d, r, nil
	}
	d, err := importer.DetectPath(path)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return d, nil, cli.Usagef("%v", err)
		}
		return importer.Detection{Format: importer.FormatTraceV2, Sure: true}, stdin, nil
	}
	return d, stdin, nil
}

// unrecognised is a TraceV2 reading error of an input whose content named
// no format: it adds that no foreign shape was recognised either.
type unrecognised struct{ err error }

func (u *unrecognised) Error() string {
	return u.err.Error() + " (not a TraceV2 trace, and not the shape of an Azure, Mooncake, Vidur, vllm-bench or LLMServingSim trace either; --from FORMAT forces one)"
}

func (u *unrecognised) Unwrap() error { return u.err }

// traceRows reads a TraceV2 trace again, on the origin found by the first
// reading, without repeating its warnings.
type traceRows struct {
	in     tracev2.Input
	opts   tracev2.Options
	origin tracev2.Origin
}

func (t *traceRows) Open() (replay.RowReader, error) {
	r, _, err := tracev2.Open(t.in, t.opts)
	if err != nil {
		return nil, err
	}
	r.Normalize(t.origin)
	return r, nil
}

// readTrace is the validating first reading of a TraceV2 trace: every row
// is checked, the time origin found, request ids checked for duplicates
// (8 bytes per row); stdin is copied to a spool file on the way so it can
// be read again.
func readTrace(src tracev2.Input, opts tracev2.Options, log *slog.Logger) (*input, error) {
	in, done := &input{}, false
	defer func() {
		if !done {
			in.close()
		}
	}()
	first, again := src, src
	var tee *teeReader
	if src.Path == "-" || src.HeaderPath == "-" || src.DataPath == "-" {
		f, err := os.CreateTemp("", "replay-stdin-*")
		if err != nil {
			return nil, fmt.Errorf("spool stdin: %w", err)
		}
		in.spools = append(in.spools, f.Name())
		defer f.Close()
		tee = &teeReader{r: src.Stdin, f: f, w: bufio.NewWriterSize(f, 256<<10)}
		first.Stdin = tee
		for _, p := range []*string{&again.Path, &again.HeaderPath, &again.DataPath} {
			if *p == "-" {
				*p = f.Name()
			}
		}
		again.Stdin = nil
	}
	r, _, err := tracev2.Open(first, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var ids []int64
	var rec tracev2.Record
	var st tracev2.StatusTally
	for {
		err := r.Read(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		ids = append(ids, rec.RequestID)
		in.spans = in.spans || hasSpan(&rec)
		st.Add(rec.Status, r.Line())
	}
	if w := st.Warning(r.Name()); w != "" {
		log.Warn(w + " (replayed all the same; --skip-failed leaves them out)")
	}
	origin, err := r.Origin()
	if err != nil {
		return nil, err
	}
	if tee != nil {
		if err := tee.finish(); err != nil {
			return nil, err
		}
	}
	if r.Skipped() > 0 {
		log.Warn("malformed rows skipped (--lenient)", "rows", r.Skipped())
	}
	in.name, in.header, in.cols, in.n = r.Name(), r.Header(), r.Columns(), len(ids)
	if in.n == 0 {
		return nil, cli.Usagef("%s: the trace has no requests", in.name)
	}
	quiet := tracev2.Options{Lenient: opts.Lenient, Strict: opts.Strict}
	if err := checkUnique(ids, again, quiet, in.name); err != nil {
		return nil, err
	}
	in.rows = &traceRows{in: again, opts: quiet, origin: origin}
	in.unique = true // checkUnique
	done = true
	return in, nil
}

// teeReader copies what is read from r to the file f (through w), and the
// rest of r at finish.
type teeReader struct {
	r io.Reader
	f *os.File
	w *bufio.Writer
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		if _, werr := t.w.Write(p[:n]); werr != nil {
			return n, fmt.Errorf("spool stdin: %w", werr)
		}
	}
	return n, err
}

func (t *teeReader) finish() error {
	if _, err := io.Copy(t.w, t.r); err != nil {
		return fmt.Errorf("spool stdin: %w", err)
	}
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("spool stdin: %w", err)
	}
	if err := t.f.Close(); err != nil {
		return fmt.Errorf("spool stdin: %w", err)
	}
	return nil
}

// checkUnique fails on a duplicated request_id (SimResults are keyed by
// it), with the lines of both rows, as tracev2's IndexByID names them.
func checkUnique(ids []int64, in tracev2.Input, opts tracev2.Options, name string) error {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	dups := map[int64]bool{}
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			dups[sorted[i]] = true
		}
	}
	if len(dups) == 0 {
		return nil
	}
	r, _, err := tracev2.Open(in, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	first := map[int64]int{}
	var rec tracev2.Record
	for r.Read(&rec) == nil {
		if !dups[rec.RequestID] {
			continue
		}
		if line, ok := first[rec.RequestID]; ok {
			return &tracev2.Error{File: name, Line: r.Line(), Column: 1, What: "column request_id",
				Msg: fmt.Sprintf("%d is duplicated (first on line %d)", rec.RequestID, line)}
		}
		first[rec.RequestID] = r.Line()
	}
	return fmt.Errorf("%s: duplicated request ids, not found again on a second reading", name)
}

// mergeInputs reads several traces of one run (the per-worker traces of a
// sharded observe) and merges them by time on one origin
// (tracev2.Merge), in memory; the merged rows are spooled like an import.
func mergeInputs(paths []string, opts tracev2.Options, stdin io.Reader, log *slog.Logger) (*input, error) {
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
	in, done := &input{name: tr.Name, header: tr.Header, cols: tr.Columns, n: len(tr.Records)}, false
	defer func() {
		if !done {
			in.close()
		}
	}()
	f, err := os.CreateTemp("", "replay-merge-*.csv")
	if err != nil {
		return nil, fmt.Errorf("spool the merged traces: %w", err)
	}
	in.spools = append(in.spools, f.Name())
	defer f.Close()
	bw := bufio.NewWriterSize(f, 256<<10)
	w, err := tracev2.NewWriter(bw, tr.Columns)
	if err != nil {
		return nil, err
	}
	for i := range tr.Records {
		if err := w.Write(&tr.Records[i]); err != nil {
			return nil, fmt.Errorf("spool the merged traces: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("spool the merged traces: %w", err)
	}
	if in.n == 0 {
		return nil, cli.Usagef("%s: the traces have no requests", tr.Name)
	}
	log.Info("merged traces", "inputs", len(paths), "rows", in.n)
	in.rows = &spoolRows{path: f.Name(), name: tr.Name}
	done = true
	return in, nil
}

// spoolRows reads the data CSV an import was spooled to.
type spoolRows struct{ path, name string }

func (s *spoolRows) Open() (replay.RowReader, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	r, err := tracev2.NewReader(f, s.name, tracev2.Options{})
	if err != nil {
		f.Close()
		return nil, err
	}
	return &fileReader{Reader: r, f: f}, nil
}

type fileReader struct {
	*tracev2.Reader
	f *os.File
}

func (r *fileReader) Close() error { return r.f.Close() }

// importSource is an open foreign trace.
type importSource struct {
	format importer.Format
	path   string // as given ("-": stdin)
	name   string
	imp    importer.Importer
	file   io.ReadCloser
	tee    *teeReader // stdin's bytes, kept to import them again (openImport's keep)
}

// openImport opens a foreign trace with its importer. With keep, stdin's
// bytes are copied to a spool file on the way (importSource.reopen).
func openImport(format importer.Format, path string, stdin io.Reader, keep bool) (*importSource, error) {
	if !slices.Contains(importer.Formats(), format) {
		return nil, cli.Usagef("--from %q: want one of %v", format, importer.Formats())
	}
	src := &importSource{format: format, path: path}
	if keep && path == "-" {
		f, err := os.CreateTemp("", "replay-stdin-*")
		if err != nil {
			return nil, fmt.Errorf("spool stdin: %w", err)
		}
		src.tee = &teeReader{r: stdin, f: f, w: bufio.NewWriterSize(f, 256<<10)}
		stdin = src.tee
	}
	r, name, err := cli.OpenInput(path, stdin)
	if err != nil {
		src.discard()
		return nil, err
	}
	src.name = name
	if err := src.open(r); err != nil {
		return nil, err
	}
	return src, nil
}

// open starts the importer on r, the trace's bytes; on failure s is
// discarded.
func (s *importSource) open(r io.ReadCloser) error {
	s.file = r
	dec, err := importer.Decompress(r, s.name)
	if err == nil {
		s.imp, err = importer.Open(s.format, s.name, dec, importer.Options{})
	}
	if err != nil {
		s.discard()
	}
	return err
}

// close closes the trace's file; a stdin spool is left to reopen.
func (s *importSource) close() {
	if s.file != nil {
		s.file.Close()
		s.file = nil
	}
}

// reopen opens the same trace again, from its start: the file, or the
// spool of stdin (then removed with in's spools).
func (s *importSource) reopen(in *input) (*importSource, error) {
	s.close()
	if s.tee == nil {
		return openImport(s.format, s.path, nil, false)
	}
	in.spools = append(in.spools, s.tee.f.Name())
	if err := s.tee.finish(); err != nil {
		return nil, err
	}
	f, err := os.Open(s.tee.f.Name())
	if err != nil {
		return nil, fmt.Errorf("spool stdin: %w", err)
	}
	again := &importSource{format: s.format, path: s.path, name: s.name}
	if err := again.open(f); err != nil {
		return nil, err
	}
	return again, nil
}

// spoolImport imports the records of src (after first, a record already
// taken from it, if not nil) into a spool, and returns the input that
// reads it.
func spoolImport(src *importSource, first *tracev2.Record, log *slog.Logger) (*input, error) {
	in, done := &input{name: src.name, header: src.imp.Header()}, false
	defer func() {
		if !done {
			in.close()
		}
	}()
	f, err := os.CreateTemp("", "replay-import-*.csv")
	if err != nil {
		return nil, fmt.Errorf("spool the import: %w", err)
	}
	in.spools = append(in.spools, f.Name())
	defer f.Close()
	bw := bufio.NewWriterSize(f, 256<<10)
	w, err := tracev2.NewWriter(bw, tracev2.Columns{HashIDs: true})
	if err != nil {
		return nil, err
	}
	var ids []int64 // importers number their rows; checked all the same (8 bytes a row)
	for {
		var rec tracev2.Record
		if first != nil {
			rec, first = *first, nil
		} else if rec, err = src.imp.Next(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, err
		}
		if len(rec.HashIDs) > 0 {
			in.cols.HashIDs = true
		}
		if err := w.Write(&rec); err != nil {
			return nil, fmt.Errorf("spool the import: %w", err)
		}
		ids = append(ids, rec.RequestID)
		in.spans = in.spans || hasSpan(&rec)
		in.n++
	}
	slices.Sort(ids)
	in.unique = len(slices.Compact(ids)) == len(ids)
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("spool the import: %w", err)
	}
	for _, w := range src.imp.Warnings() {
		log.Warn(w)
	}
	if in.n == 0 {
		return nil, cli.Usagef("%s: the trace has no requests", src.name)
	}
	in.rows = &spoolRows{path: f.Name(), name: src.name}
	done = true
	return in, nil
}

// describe is a one-line account of the input for the log.
func (in *input) describe() string {
	mode := in.header.Mode
	if mode == "" {
		mode = "unknown mode"
	}
	return fmt.Sprintf("%s: %d rows (%s)", in.name, in.n, mode)
}
