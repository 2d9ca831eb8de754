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
	"servesim/internal/tracev2/importer"
)

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
		return nil, exitcode.Usagef("--from %q: want one of %v", format, importer.Formats())
	}
	src := &importSource{format: format, path: path}
	if keep && path == "-" {
		f, err := os.CreateTemp("", "trace-stdin-*")
		if err != nil {
			return nil, fmt.Errorf("spool stdin: %w", err)
		}
		src.tee = &teeReader{r: stdin, f: f, w: bufio.NewWriterSize(f, 256<<10)}
		stdin = src.tee
	}
	r, name, err := OpenFile(path, stdin)
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

// discard closes s and removes the copy of stdin it may keep.
func (s *importSource) discard() {
	s.close()
	if s.tee != nil {
		s.tee.f.Close()
		os.Remove(s.tee.f.Name())
		s.tee = nil
	}
}

// reopen opens the same trace again, from its start: the file, or the
// spool of stdin (then removed with t's spools).
func (s *importSource) reopen(t *Trace) (*importSource, error) {
	s.close()
	if s.tee == nil {
		return openImport(s.format, s.path, nil, false)
	}
	t.spools = append(t.spools, s.tee.f.Name())
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
// taken from it, if not nil) into a spool, and returns the trace that
// reads it.
func spoolImport(src *importSource, first *tracev2.Record, log *slog.Logger) (*Trace, error) {
	t, done := &Trace{Name: src.name, Header: src.imp.Header()}, false
	defer func() {
		if !done {
			t.Close()
		}
	}()
	var ids []int64 // importers number their rows; checked all the same (8 bytes a row)
	err := t.spool("trace-import-*.csv", "the import", tracev2.Columns{HashIDs: true}, func(w *tracev2.Writer) error {
		for {
			var rec tracev2.Record
			var err error
			if first != nil {
				rec, first = *first, nil
			} else if rec, err = src.imp.Next(); errors.Is(err, io.EOF) {
				return nil
			} else if err != nil {
				return err
			}
			if len(rec.HashIDs) > 0 {
				t.Columns.HashIDs = true
			}
			if err := w.Write(&rec); err != nil {
				return fmt.Errorf("spool the import: %w", err)
			}
			ids = append(ids, rec.RequestID)
			t.Spans = t.Spans || hasSpan(&rec)
			t.N++
		}
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	t.Unique = len(slices.Compact(ids)) == len(ids)
	for _, w := range src.imp.Warnings() {
		log.Warn(w)
	}
	if t.N == 0 {
		return nil, exitcode.Usagef("%s: the trace has no requests", src.name)
	}
	t.Rows = &spoolRows{path: t.spools[len(t.spools)-1], name: src.name}
	done = true
	return t, nil
}
