package input

import (
	"errors"
	"io"
	"log/slog"
	"os"

	"servesim/internal/tracev2"
	"servesim/internal/tracev2/importer"
)

// Streaming an import. Importers number their rows in file order, and the
// production traces (Azure's, Mooncake's) are sorted by time, so their
// rows already come in injection order: a replay can then read the import
// once, as the simulation takes its rows, instead of importing it into a
// spool and reading that twice. What streaming assumes is checked row by
// row: no row with a send and an end (a client would have to be looked for
// in the whole trace first), ext_hash_ids present from the first row on or
// on none; the consumer checks the order. A trace that is not as assumed
// is spooled (Trace.Spool) and read the usual way: imported anew, from the
// file or from a copy of stdin kept on the way.

// ErrNotStreamable says a streamed import broke what streaming assumed.
var ErrNotStreamable = errors.New("the import cannot be streamed")

// Stream is an import read as it is replayed: a RowReader over its rows.
type Stream struct {
	src     *importSource
	first   *tracev2.Record // taken by importTrace, not read yet
	hashIDs bool            // rows have ext_hash_ids (the first one has)
	n       int
	err     error // the import's own error (a bad row)
}

// importTrace imports a foreign trace (spoolImport) or, with stream, opens
// it and takes its first row, to be streamed or spooled later (Spool). A
// first row with a send and an end is spooled at once: the client is
// looked for in the whole trace.
func importTrace(format importer.Format, path string, stdin io.Reader, log *slog.Logger, stream bool) (*Trace, error) {
	src, err := openImport(format, path, stdin, stream)
	if err != nil {
		return nil, err
	}
	if !stream {
		defer src.close()
		return spoolImport(src, nil, log)
	}
	first, err := src.imp.Next()
	switch {
	case errors.Is(err, io.EOF):
		defer src.discard()
		return spoolImport(src, nil, log) // the trace has no requests
	case err != nil:
		src.discard()
		return nil, err
	case hasSpan(&first):
		defer src.discard()
		return spoolImport(src, &first, log)
	}
	s := &Stream{src: src, first: &first, hashIDs: len(first.HashIDs) > 0}
	t := &Trace{Name: src.name, Header: src.imp.Header(), Unique: true, Stream: s}
	t.Columns.HashIDs = s.hashIDs
	return t, nil
}

// Read implements RowReader; it fails with ErrNotStreamable at the first
// row that breaks what streaming assumes.
func (s *Stream) Read(rec *tracev2.Record) error {
	if s.first != nil {
		*rec, s.first = *s.first, nil
	} else {
		r, err := s.src.imp.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				s.err = err
			}
			return err
		}
		*rec = r
	}
	if hasSpan(rec) || (len(rec.HashIDs) > 0 && !s.hashIDs) {
		return ErrNotStreamable
	}
	s.n++
	return nil
}

// Close implements RowReader; the Trace closes the import.
func (s *Stream) Close() error { return nil }

// Rows is the number of rows read so far.
func (s *Stream) Rows() int { return s.n }

// Err is the import's own error (a bad row) met while reading, if any: the
// error importing the trace first would have given.
func (s *Stream) Err() error { return s.err }

// Warnings are the importer's warnings so far.
func (s *Stream) Warnings() []string { return s.src.imp.Warnings() }

// Again is a second, independent reading of the import's rows, for a
// consumer that must see them all before it replays them (the hash-id
// prefix count), with a hint of how many hash ids they hold. Only a
// regular file can be read twice, not stdin nor a pipe, and only rows
// with hash ids need it: ok is false otherwise. The caller closes rd.
func (s *Stream) Again() (rd RowReader, hint int, ok bool) {
	if !s.hashIDs || s.src.tee != nil {
		return nil, 0, false
	}
	st, err := os.Stat(s.src.path)
	if err != nil || !st.Mode().IsRegular() {
		return nil, 0, false
	}
	again, err := openImport(s.src.format, s.src.path, nil, false)
	if err != nil {
		return nil, 0, false // the replay meets it
	}
	// A hash id takes 8 to 10 bytes of Mooncake's JSON lines: room for all
	// at the first try (a compressed file's table grows).
	return importRows{again}, int(min(st.Size()/8, 1<<30)), true
}

// importRows reads an import's records as a RowReader.
type importRows struct{ src *importSource }

func (r importRows) Read(rec *tracev2.Record) error {
	next, err := r.src.imp.Next()
	*rec = next
	return err
}

func (r importRows) Close() error {
	r.src.discard()
	return nil
}

// Spool imports t's Stream into a spool, so that t is read the usual way
// (Rows): from its first row when it was not streamed, else anew.
func (t *Trace) Spool() error {
	s := t.Stream
	src, first := s.src, s.first
	if first == nil { // streamed: import it again
		again, err := src.reopen(t)
		if err != nil {
			return err
		}
		src.discard()
		src = again
	}
	defer src.discard()
	spooled, err := spoolImport(src, first, t.log)
	if err != nil {
		return err
	}
	t.Stream = nil
	t.spools = append(t.spools, spooled.spools...)
	t.Rows, t.N, t.Columns, t.Unique, t.Spans = spooled.Rows, spooled.N, spooled.Columns, spooled.Unique, spooled.Spans
	return nil
}
