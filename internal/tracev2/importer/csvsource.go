package importer

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gocarina/gocsv"
)

// csvSource reads a CSV whose first row names the columns and binds each
// row by column name into a T (a struct with `csv` tags) with gocsv. Rows
// are read and checked here, csvBatch at a time, and fed to gocsv together
// through rowFeeder (synchronous: no goroutine); binding them one by one
// cost gocsv's header matching per row, most of an import's time. The
// rows are then served one at a time with their physical lines for error
// messages, and a bad row's error comes when its turn does.
type csvSource[T any] struct {
	file    string
	r       *csv.Reader
	header  []string       // column names, trimmed, BOM and zero-width removed
	index   map[string]int // column name -> 0-based field index
	line    int            // physical line where the current row starts
	feeder  rowFeeder
	records int // data rows served so far

	bound []T   // the batch, bound
	lines []int // its rows' lines
	pos   int   // the next row of the batch to serve
	after error // what follows the batch: a bad row's error, or io.EOF
}

// csvBatch is the number of rows bound by one call of gocsv.
const csvBatch = 256

// rowFeeder is a gocsv.CSVReader that yields the column row and a batch of
// data rows.
type rowFeeder struct{ rows [][]string }

func (f *rowFeeder) Read() ([]string, error)      { return nil, io.EOF }
func (f *rowFeeder) ReadAll() ([][]string, error) { return f.rows, nil }

// newCSVSource reads the column row and checks that every required name is
// present exactly once.
func newCSVSource[T any](name string, rd io.Reader, required []string) (*csvSource[T], error) {
	s := &csvSource[T]{file: displayName(name), r: csv.NewReader(rd)}
	s.r.FieldsPerRecord = -1 // row length is checked here, with a better message
	head, err := s.r.Read()
	if err == io.EOF {
		return nil, &Error{File: s.file, Line: 1, Column: 1,
			Msg: fmt.Sprintf("empty file, want a column row naming %s", strings.Join(required, ", "))}
	}
	if err != nil {
		return nil, s.syntaxErr(err)
	}
	s.header = make([]string, len(head))
	s.index = make(map[string]int, len(head))
	for i, h := range head {
		h = normalizeName(h)
		s.header[i] = h
		if _, dup := s.index[h]; dup && h != "" {
			return nil, &Error{File: s.file, Line: 1, Column: i + 1, Field: h,
				Msg: "column name appears twice in the column row"}
		}
		s.index[h] = i
	}
	for _, want := range required {
		if _, ok := s.index[want]; !ok {
			return nil, &Error{File: s.file, Line: 1, Column: 1, Field: want,
				Msg: fmt.Sprintf("missing from the column row (have %s)", quote(strings.Join(s.header, ",")))}
		}
	}
	s.feeder.rows = append(make([][]string, 0, csvBatch+1), s.header)
	s.bound = make([]T, csvBatch)
	return s, nil
}

// normalizeName trims spaces and removes a byte-order mark or zero-width
// characters, as gocsv does when matching names.
func normalizeName(h string) string {
	h = strings.Map(func(r rune) rune {
		switch r {
		case '\uFEFF', '\u200B', '\u200C', '\u200D':
			return -1
		}
		return r
	}, h)
	return strings.TrimSpace(h)
}

// next binds the next data row into out. It returns io.EOF at the end.
func (s *csvSource[T]) next(out *T) error {
	if s.pos == len(s.lines) {
		if s.after != nil {
			return s.after
		}
		if err := s.fill(); err != nil {
			return err
		}
	}
	*out = s.bound[s.pos]
	s.line = s.lines[s.pos]
	s.pos++
	s.records++
	return nil
}

// fill reads and binds the next batch: the rows up to csvBatch, or to the
// end or the first bad row, whose error waits in after.
func (s *csvSource[T]) fill() error {
	s.feeder.rows, s.lines, s.pos = s.feeder.rows[:1], s.lines[:0], 0
	for len(s.lines) < csvBatch {
		row, err := s.read()
		if err != nil {
			s.after = err
			break
		}
		s.feeder.rows = append(s.feeder.rows, row)
		s.lines = append(s.lines, s.line)
	}
	if len(s.lines) == 0 {
		return s.after
	}
	if err := gocsv.UnmarshalCSV(&s.feeder, &s.bound); err != nil {
		s.lines = s.lines[:0]
		return fmt.Errorf("%s:%d: bind rows: %w", s.file, s.line, err)
	}
	return nil
}

// read reads the next data row and checks its length.
func (s *csvSource[T]) read() ([]string, error) {
	row, err := s.r.Read()
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, s.syntaxErr(err)
	}
	s.line, _ = s.r.FieldPos(0)
	if len(row) < len(s.header) {
		return nil, s.errAt(len(row), fmt.Sprintf("missing (row has %d fields, the column row has %d)", len(row), len(s.header)))
	}
	for i := len(s.header); i < len(row); i++ {
		if row[i] != "" { // trailing empty fields (a trailing comma) are allowed
			return nil, &Error{File: s.file, Line: s.line, Column: i + 1,
				Msg: fmt.Sprintf("row has %d fields, the column row has %d", len(row), len(s.header))}
		}
	}
	return row[:len(s.header)], nil
}

// errAt is a value error for the field at 0-based index i of the current row.
func (s *csvSource[T]) errAt(i int, msg string) *Error {
	return &Error{File: s.file, Line: s.line, Column: i + 1, Field: s.header[i], Msg: msg}
}

// errField is a value error for the named column of the current row.
func (s *csvSource[T]) errField(name, msg string) *Error {
	return s.errAt(s.index[name], msg)
}

// syntaxErr converts an encoding/csv error into an *Error.
func (s *csvSource[T]) syntaxErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: s.file, Line: pe.Line, Column: pe.Column,
			Msg: "csv syntax: " + pe.Err.Error(), Err: err}
	}
	return fmt.Errorf("%s: read: %w", s.file, err)
}
