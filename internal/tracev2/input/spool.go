package input

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
)

// readTrace is the validating first reading of a TraceV2 trace: every row
// is checked, the time origin found, request ids checked for duplicates
// (8 bytes per row); stdin is copied to a spool file on the way so it can
// be read again.
func readTrace(src tracev2.Input, opts tracev2.Options, log *slog.Logger) (*Trace, error) {
	t, done := &Trace{}, false
	defer func() {
		if !done {
			t.Close()
		}
	}()
	first, again := src, src
	var tee *teeReader
	if src.Path == "-" || src.HeaderPath == "-" || src.DataPath == "-" {
		f, err := os.CreateTemp("", "trace-stdin-*")
		if err != nil {
			return nil, fmt.Errorf("spool stdin: %w", err)
		}
		t.spools = append(t.spools, f.Name())
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
		t.Spans = t.Spans || hasSpan(&rec)
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
	t.Name, t.Header, t.Columns, t.N = r.Name(), r.Header(), r.Columns(), len(ids)
	if t.N == 0 {
		return nil, exitcode.Usagef("%s: the trace has no requests", t.Name)
	}
	quiet := tracev2.Options{Lenient: opts.Lenient, Strict: opts.Strict}
	if err := checkUnique(ids, again, quiet, t.Name); err != nil {
		return nil, err
	}
	t.Rows = &traceRows{in: again, opts: quiet, origin: origin}
	t.Unique = true // checkUnique
	done = true
	return t, nil
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

// checkUnique fails on a duplicated request_id (results are keyed by it),
// with the lines of both rows, as tracev2's IndexByID names them.
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

// merge reads several traces of one run and merges them by time, in
// memory (loadMerged); the merged rows are spooled like an import.
func merge(paths []string, opts tracev2.Options, stdin io.Reader, log *slog.Logger) (*Trace, error) {
	l, err := loadMerged(paths, opts, stdin, log)
	if err != nil {
		return nil, err
	}
	tr := l.Trace
	t, done := &Trace{Name: tr.Name, Header: tr.Header, Columns: tr.Columns, N: len(tr.Records)}, false
	defer func() {
		if !done {
			t.Close()
		}
	}()
	err = t.spool("trace-merge-*.csv", "the merged traces", tr.Columns, func(w *tracev2.Writer) error {
		for i := range tr.Records {
			if err := w.Write(&tr.Records[i]); err != nil {
				return fmt.Errorf("spool the merged traces: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if t.N == 0 {
		return nil, exitcode.Usagef("%s: the traces have no requests", tr.Name)
	}
	log.Info("merged traces", "inputs", len(paths), "rows", t.N)
	t.Rows = &spoolRows{path: t.spools[len(t.spools)-1], name: tr.Name}
	done = true
	return t, nil
}

// spool writes rows through write into a new temporary file named by
// pattern, which t removes when it is closed (the last of t.spools); what
// names the rows in errors of creating and flushing it.
func (t *Trace) spool(pattern, what string, cols tracev2.Columns, write func(*tracev2.Writer) error) error {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return fmt.Errorf("spool %s: %w", what, err)
	}
	t.spools = append(t.spools, f.Name())
	defer f.Close()
	bw := bufio.NewWriterSize(f, 256<<10)
	w, err := tracev2.NewWriter(bw, cols)
	if err != nil {
		return err
	}
	if err := write(w); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("spool %s: %w", what, err)
	}
	return nil
}
