package tracev2

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"

	"github.com/gocarina/gocsv"
)

// ITLRow is one row of an ITL CSV (docs/tracev2.md §8): one SSE data event of a
// streamed request. TimestampUs is on the trace's time origin.
type ITLRow struct {
	RequestID   int64
	ChunkIndex  int
	TimestampUs int64
}

// itlCSV binds the ITL columns by name through gocsv (the mandated library
// for name-bound CSV; the ITL file is where speed matters less than in the
// trace reader). Its fields are strings on purpose: gocsv's own number
// conversion accepts "0x1F", truncates "1.9" and reads an empty field as 0,
// all of which docs/tracev2.md §7 makes errors, so values are parsed here with the
// trace reader's strict parser and located with csv.Reader.FieldPos.
type itlCSV struct {
	RequestID   string `csv:"request_id"`
	ChunkIndex  string `csv:"chunk_index"`
	TimestampUs string `csv:"timestamp_us"`
}

// itlOut is the row gocsv writes.
type itlOut struct {
	RequestID   int64 `csv:"request_id"`
	ChunkIndex  int   `csv:"chunk_index"`
	TimestampUs int64 `csv:"timestamp_us"`
}

// itlColumns names the ITL columns in write order.
func itlColumns() [3]string { return [3]string{"request_id", "chunk_index", "timestamp_us"} }

// ITLReader streams an ITL CSV. Epoch timestamps are shifted by the trace's
// origin (Origin.Time); consumers use only differences.
type ITLReader struct {
	name   string
	cr     *csv.Reader
	um     *gocsv.Unmarshaller
	origin Origin
	idx    [3]int
	line   int
	closer io.Closer
	err    error
}

// NewITLReader reads the column row of an ITL CSV from r (gzip and a BOM
// accepted). o is the trace's origin; the zero Origin leaves times as they are.
func NewITLReader(r io.Reader, name string, o Origin) (*ITLReader, error) {
	br, err := newInput(r, name)
	if err != nil {
		return nil, err
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	um, err := gocsv.NewUnmarshaller(cr, itlCSV{})
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{File: name, Line: 1, Column: 1, What: "csv", Msg: "no column row: the data is empty"}
		}
		return nil, itlCSVError(name, err)
	}
	ir := &ITLReader{name: name, cr: cr, um: um, origin: o}
	for k, col := range itlColumns() {
		ir.idx[k] = -1
		for i, h := range um.Headers {
			if h != col {
				continue
			}
			if ir.idx[k] >= 0 {
				return nil, &Error{File: name, Line: 1, Column: i + 1, What: "column " + col,
					Msg: fmt.Sprintf("duplicated (also field %d)", ir.idx[k]+1)}
			}
			ir.idx[k] = i
		}
		if ir.idx[k] < 0 {
			return nil, &Error{File: name, Line: 1, Column: 1, What: "column " + col, Msg: "missing from the column row"}
		}
	}
	return ir, nil
}

// OpenITL opens an ITL CSV file, or stdin for "-".
func OpenITL(path string, stdin io.Reader, o Origin) (*ITLReader, error) {
	rc, br, name, err := openPath(path, stdin)
	if err != nil {
		return nil, err
	}
	r, err := NewITLReader(br, name, o)
	if err != nil {
		closeQuiet(rc)
		return nil, err
	}
	r.closer = rc
	return r, nil
}

// Read fills row with the next ITL row, or returns io.EOF.
func (r *ITLReader) Read(row *ITLRow) error {
	if r.err != nil {
		return r.err
	}
	v, err := r.um.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			r.err = io.EOF
		} else {
			r.err = itlCSVError(r.name, err)
		}
		return r.err
	}
	rec, ok := v.(itlCSV)
	if !ok {
		r.err = fmt.Errorf("%s: unexpected row type %T", r.name, v)
		return r.err
	}
	r.line, _ = r.cr.FieldPos(0)
	vals := [3]string{rec.RequestID, rec.ChunkIndex, rec.TimestampUs}
	var out [3]int64
	for k, s := range vals {
		n, fail := parseInt([]byte(s))
		msg := ""
		switch {
		case fail == parseEmpty:
			msg = "empty, want an integer"
		case fail == parseSyntax:
			msg = quote([]byte(s)) + " is not an integer"
		case fail == parseRange:
			msg = quote([]byte(s)) + " is out of range"
		case n < 0:
			msg = quote([]byte(s)) + " is negative"
		}
		if msg != "" {
			r.err = &Error{File: r.name, Line: r.line, Column: r.idx[k] + 1, What: "column " + itlColumns()[k], Msg: msg}
			return r.err
		}
		out[k] = n
	}
	*row = ITLRow{RequestID: out[0], ChunkIndex: int(out[1]), TimestampUs: r.origin.Time(out[2])}
	return nil
}

// Line is the physical line of the row last returned.
func (r *ITLReader) Line() int { return r.line }

// Close closes the file OpenITL opened.
func (r *ITLReader) Close() error {
	c := r.closer
	r.closer = nil
	if c == nil {
		return nil
	}
	return c.Close()
}

// ReadITL reads a whole ITL CSV.
func ReadITL(r io.Reader, name string, o Origin) ([]ITLRow, error) {
	ir, err := NewITLReader(r, name, o)
	if err != nil {
		return nil, err
	}
	var rows []ITLRow
	for {
		var row ITLRow
		err := ir.Read(&row)
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
}

// itlCSVError locates an encoding/csv error.
func itlCSVError(name string, err error) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("read %s: %w", name, err)
	}
	msg := pe.Err.Error()
	what := "csv syntax"
	switch {
	case errors.Is(pe.Err, csv.ErrBareQuote):
		msg = `bare " in unquoted field`
	case errors.Is(pe.Err, csv.ErrQuote):
		msg = `extraneous or missing " in quoted field`
	case errors.Is(pe.Err, csv.ErrFieldCount):
		what, msg = "row", "wrong number of fields: every row must have as many as the column row"
	}
	return &Error{File: name, Line: pe.Line, Column: pe.Column, What: what, Msg: msg, Err: err}
}

// ITLWriter writes an ITL CSV through gocsv, one request's chunks at a time,
// flushing after each so an interrupted producer leaves whole requests.
type ITLWriter struct {
	cw   *gocsv.SafeCSVWriter
	out  *countingWriter
	rows []itlOut
	err  error // sticky: the first failed write
}

// NewITLWriter writes the column row to w.
func NewITLWriter(w io.Writer) (*ITLWriter, error) {
	if w == nil {
		return nil, errors.New("tracev2: NewITLWriter: nil io.Writer")
	}
	out := &countingWriter{w: w}
	iw := &ITLWriter{cw: gocsv.NewSafeCSVWriter(csv.NewWriter(out)), out: out}
	if err := gocsv.MarshalCSV(&[]itlOut{}, iw.cw); err != nil {
		return nil, fmt.Errorf("write ITL column row: %w", err)
	}
	return iw, nil
}

// WriteRequest writes the chunks of one request, chunk_index 0 first. Times
// must be on the trace's origin and not negative. A failed write leaves
// none of the request's rows in a file, and fails every later call.
func (w *ITLWriter) WriteRequest(requestID int64, timestampsUs []int64) error {
	if w.err != nil {
		return w.err
	}
	if requestID < 0 {
		return fmt.Errorf("write ITL: request_id %d is negative", requestID)
	}
	w.rows = w.rows[:0]
	for i, ts := range timestampsUs {
		if ts < 0 {
			return fmt.Errorf("write ITL: request %d chunk %d: timestamp %d is negative", requestID, i, ts)
		}
		w.rows = append(w.rows, itlOut{RequestID: requestID, ChunkIndex: i, TimestampUs: ts})
	}
	if len(w.rows) == 0 {
		return nil
	}
	w.out.n = 0
	if err := gocsv.MarshalCSVWithoutHeaders(&w.rows, w.cw); err != nil {
		cutBack(w.out.w, w.out.n)
		w.err = fmt.Errorf("write ITL request %d: %w", requestID, err)
		return w.err
	}
	return nil
}
