package input

import (
	"errors"
	"io"
	"os"

	"servesim/internal/tracev2"
)

// Rows is a trace's rows in file order, on the time origin of the first
// reading (epoch times already normalised), that can be read more than
// once: a consumer may read them once to learn their order and again as it
// uses them, so the trace never has to be held in memory.
type Rows interface {
	Open() (RowReader, error)
}

// RowReader is one pass over Rows. *tracev2.Reader is one.
type RowReader interface {
	// Read fills rec with the next row, or returns io.EOF after the last.
	Read(rec *tracev2.Record) error
	Close() error
}

// traceRows reads a TraceV2 trace again, on the origin found by the first
// reading, without repeating its warnings.
type traceRows struct {
	in     tracev2.Input
	opts   tracev2.Options
	origin tracev2.Origin
}

func (t *traceRows) Open() (RowReader, error) {
	r, _, err := tracev2.Open(t.in, t.opts)
	if err != nil {
		return nil, err
	}
	r.Normalize(t.origin)
	return r, nil
}

// spoolRows reads the data CSV an import or a merge was spooled to.
type spoolRows struct{ path, name string }

func (s *spoolRows) Open() (RowReader, error) {
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

// Each reads rows once from the first to the last, handing each to fn in
// the same Record (fn must copy what it keeps), and stops at the first
// error of the reading or of fn.
func Each(rows Rows, fn func(rec *tracev2.Record) error) error {
	rd, err := rows.Open()
	if err != nil {
		return err
	}
	defer rd.Close()
	var rec tracev2.Record
	for {
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
}
