package importer

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gocarina/gocsv"
)

// csvSource reads a CSV whose first row names the columns, one row at a time,
// and binds each row by column name into a struct with gocsv. Rows are fed to
// gocsv one at a time through rowFeeder, so binding is synchronous (no
// goroutine, no read-ahead) and the csv.Reader still knows the row's physical
// line for error messages.
type csvSource struct {
	file    string
	r       *csv.Reader
	header  []string       // column names, trimmed, BOM and zero-width removed
	index   map[string]int // column name -> 0-based field index
	row     []string       // the current row
	line    int            // physical line where the current row starts
	feeder  rowFeeder
	records int // data rows read so far
}

// rowFeeder is a gocsv.CSVReader that yields the column row and one data row.
type rowFeeder struct{ rows [2][]string }

func (f *rowFeeder) Read() ([]string, error)      { return nil, io.EOF }
func (f *rowFeeder) ReadAll() ([][]string, error) { return f.rows[:], nil }

// newCSVSource reads the column row and checks that every required name is
// present exactly once.
func newCSVSource(name string, rd io.Reader, required []string) (*csvSource, error) {
	s := &csvSource{file: displayName(name), r: csv.NewReader(rd)}
	s.r.FieldsPerRecord = -1 // row length is checked here, with a better message
	s.r.ReuseRecord = true
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
	s.feeder.rows[0] = s.header
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

// next reads the next data row and binds it into out (a pointer to a
// one-element array of a struct with `csv` tags) with gocsv. It returns io.EOF
// at the end.
func (s *csvSource) next(out any) error {
	row, err := s.r.Read()
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return s.syntaxErr(err)
	}
	s.line, _ = s.r.FieldPos(0)
	if len(row) < len(s.header) {
		return s.errAt(len(row), fmt.Sprintf("missing (row has %d fields, the column row has %d)", len(row), len(s.header)))
	}
	for i := len(s.header); i < len(row); i++ {
		if row[i] != "" { // trailing empty fields (a trailing comma) are allowed
			return &Error{File: s.file, Line: s.line, Column: i + 1,
				Msg: fmt.Sprintf("row has %d fields, the column row has %d", len(row), len(s.header))}
		}
	}
	s.row = row[:len(s.header)]
	s.records++
	s.feeder.rows[1] = s.row
	if err := gocsv.UnmarshalCSV(&s.feeder, out); err != nil {
		return fmt.Errorf("%s:%d: bind row: %w", s.file, s.line, err)
	}
	return nil
}

// errAt is a value error for the field at 0-based index i of the current row.
func (s *csvSource) errAt(i int, msg string) *Error {
	return &Error{File: s.file, Line: s.line, Column: i + 1, Field: s.header[i], Msg: msg}
}

// errField is a value error for the named column of the current row.
func (s *csvSource) errField(name, msg string) *Error {
	return s.errAt(s.index[name], msg)
}

// syntaxErr converts an encoding/csv error into an *Error.
func (s *csvSource) syntaxErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: s.file, Line: pe.Line, Column: pe.Column,
			Msg: "csv syntax: " + pe.Err.Error(), Err: err}
	}
	return fmt.Errorf("%s: read: %w", s.file, err)
}
