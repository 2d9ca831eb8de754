package tracev2

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

// Reader streams the rows of a data CSV, one Record at a time, in memory that
// grows only with the longest row. Columns are bound by the names of the
// column row, so every BLIS layout (22, 25, 26, 27 columns, 27 + optional)
// and our extension columns load. Every value is validated (docs/tracev2.md §4.7); the
// first malformed row stops reading with an *Error unless Options.Lenient.
//
// Times are returned as they are in the file. A file written by BLIS observe
// mixes offsets and Unix-epoch times; see Origin for the normalisation.
type Reader struct {
	name string
	src  lineSource
	sp   splitter
	opts Options

	bind  []colID      // column of each field of the column row
	idx   [numCols]int // field index of each column, -1 if absent
	ncols int
	cols  Columns

	hdr       *Header
	hdrNode   *yaml.Node // single stream: the header mapping, for the trailer merge
	single    bool
	simulated bool

	intern *internTable
	pend   []pendingStr
	pbuf   []byte

	// Fast-path cursor over the current line (decode.go); slowOnly lets
	// tests check that both paths agree.
	slowOnly bool
	fast     bool
	zeroed   bool // the record passed to Read is known to be zero (ReadAll)
	line     []byte
	pos      int
	short    bool
	cur      []byte
	nums     [numCols]int64 // the row's integer columns (decode.go)

	rowLine   int
	warns     warnLimiter
	skips     warnLimiter
	skipped   int
	extraWarn bool

	trailer      []byte
	trailerLines []int
	inTrailer    bool

	origin originTracker
	norm   *Origin

	err    error // sticky: io.EOF at the end, or the first error
	closer io.Closer
}

// pendingStr is a string field waiting for the row's single allocation.
type pendingStr struct {
	dst        *string
	start, end int
}

// NewReader reads a data CSV (two-file form, no header) from src. A leading
// byte-order mark and gzip compression are accepted. The column row is read
// and bound now; its errors are returned here.
func NewReader(src io.Reader, name string, opts Options) (*Reader, error) {
	br, err := newInput(src, name)
	if err != nil {
		return nil, err
	}
	return newReader(br, name, 0, nil, nil, opts)
}

// newReader starts a reader on br, whose first line is physical line
// line0+1. hdr may be nil; hdrNode is set for a single stream.
func newReader(br *bufio.Reader, name string, line0 int, hdr *Header, hdrNode *yaml.Node, opts Options) (*Reader, error) {
	r := &Reader{
		name:    name,
		src:     lineSource{br: br, name: name, line: line0},
		opts:    opts,
		hdr:     hdr,
		hdrNode: hdrNode,
		single:  hdrNode != nil,
		intern:  newInternTable(),
		warns:   warnLimiter{warn: opts.Warn},
		skips:   warnLimiter{warn: opts.Warn},
	}
	r.sp.src = &r.src
	if hdr != nil {
		r.simulated = hdr.Mode == ModeGenerated || hdr.Mode == ModeReplayed
	}
	if err := r.bindColumns(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *Reader) bindColumns() error {
	var line []byte
	for {
		l, err := r.src.next()
		if err == io.EOF {
			return &Error{File: r.name, Line: r.src.line + 1, Column: 1, What: "csv",
				Msg: "no column row: the data is empty"}
		}
		if err == errRowTooLong {
			return &Error{File: r.name, Line: r.src.line, Column: 1, What: "csv", Msg: "the column row is longer than 1 MiB"}
		}
		if err != nil {
			return err
		}
		if len(l) > 0 {
			line = l
			break
		}
	}
	rowLine := r.src.line
	if err := r.sp.split(line); err != nil {
		return err
	}
	for i := range r.idx {
		r.idx[i] = -1
	}
	r.ncols = len(r.sp.fields)
	r.bind = make([]colID, r.ncols)
	unknown := warnLimiter{warn: r.opts.Warn}
	defer func() {
		if n := unknown.suppressed; n > 0 {
			r.opts.warnf(fmt.Sprintf("%s:%d: %d more unknown columns ignored", r.name, rowLine, n))
		}
	}()
	for i, f := range r.sp.fields {
		id := colByName(string(f))
		if id == colUnknown {
			unknown.add((&Error{File: r.name, Line: rowLine, Column: i + 1, What: "column " + quote(f),
				Msg: "unknown column, ignored"}).Error())
			continue
		}
		if j := r.idx[id]; j >= 0 {
			return &Error{File: r.name, Line: rowLine, Column: i + 1, What: "column " + id.name(),
				Msg: fmt.Sprintf("duplicated (also field %d)", j+1)}
		}
		r.idx[id] = i
		r.bind[i] = id
		r.cols.set(id)
	}
	for id := colRequestID; id < numCols; id++ {
		if id.required() && r.idx[id] < 0 {
			return &Error{File: r.name, Line: rowLine, Column: 1, What: "column " + id.name(),
				Msg: "missing from the column row"}
		}
	}
	return nil
}

// estimateRows guesses the number of rows in the whole input from the size
// of the file and the mean length of the rows read so far, with 10% to
// spare; 0 when it cannot (stdin, not a regular file, nothing read yet).
// Compressed input is underestimated, which only costs a copy.
func (r *Reader) estimateRows() int {
	f, ok := r.closer.(*os.File)
	if !ok || r.src.lines == 0 || r.src.bytes == 0 {
		return 0
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	perRow := float64(r.src.bytes) / float64(r.src.lines)
	est := float64(fi.Size())/perRow*1.1 + 1024
	if est > 1<<31 {
		return 0
	}
	return int(est)
}

// Read fills rec with the next row (every field is overwritten) and returns
// nil, or io.EOF after the last row. In a single stream, io.EOF comes after
// the trailer has been merged into Header(). Errors are *Error for bad
// input (exit code 2) and wrapped read errors otherwise; both are sticky.
func (r *Reader) Read(rec *Record) error {
	if r.err != nil {
		return r.err
	}
	for {
		line, err := r.src.next()
		if err == io.EOF {
			return r.finish()
		}
		if err == errRowTooLong {
			if err := r.rowError(&Error{File: r.name, Line: r.src.line, Column: 1, What: "row", Msg: errRowTooLong.Error()}); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			r.err = err
			return err
		}
		if len(line) == 0 {
			continue
		}
		if line[0] == '#' {
			if err := r.commentLine(line); err != nil {
				if err := r.rowError(err); err != nil {
					return err
				}
			}
			continue
		}
		r.rowLine = r.src.line
		if r.inTrailer {
			if err := r.rowError(&Error{File: r.name, Line: r.rowLine, Column: 1, What: "row",
				Msg: "data row after the #+ trailer"}); err != nil {
				return err
			}
			continue
		}
		err = r.decodeRow(line, rec)
		if err == errRowTooLong {
			err = &Error{File: r.name, Line: r.rowLine, Column: 1, What: "row", Msg: errRowTooLong.Error()}
		}
		var bad *Error
		if err != nil && r.src.torn && errors.As(err, &bad) {
			// Writers end every row with a line end: a malformed last row
			// without one was cut short (a full disk, a killed writer).
			// The rows before it are whole.
			r.opts.warnf(fmt.Sprintf("%s:%d: the last row is cut short (no line end: %s); skipped", r.name, r.rowLine, bad.Msg))
			continue
		}
		if err != nil {
			if err := r.rowError(err); err != nil {
				return err
			}
			continue
		}
		if r.norm != nil {
			r.norm.Normalize(rec)
		}
		return nil
	}
}

// rowError stops reading, or in lenient mode counts the skipped row.
func (r *Reader) rowError(err error) error {
	var e *Error
	if r.opts.Lenient && errors.As(err, &e) {
		r.skipped++
		r.skips.add(e.Error() + " (row skipped)")
		return nil
	}
	r.err = err
	return err
}

// commentLine handles a line starting with '#' after the column row: a
// trailer line in a single stream, an error otherwise.
func (r *Reader) commentLine(line []byte) error {
	if !r.single {
		return &Error{File: r.name, Line: r.src.line, Column: 1, What: "row",
			Msg: "a line starting with # is allowed only in a single stream's header and trailer"}
	}
	var text []byte
	switch {
	case len(line) == 2 && line[1] == '+':
	case len(line) >= 3 && line[1] == '+' && line[2] == ' ':
		text = line[3:]
	default:
		return &Error{File: r.name, Line: r.src.line, Column: 1, What: "row",
			Msg: `a line starting with # after the column row must be a "#+ " trailer line`}
	}
	if len(r.trailer)+len(text) > maxHeaderBytes {
		return &Error{File: r.name, Line: r.src.line, Column: 1, What: "trailer", Msg: "trailer is larger than 16 MiB"}
	}
	r.inTrailer = true
	r.trailer = append(r.trailer, text...)
	r.trailer = append(r.trailer, '\n')
	r.trailerLines = append(r.trailerLines, r.src.line)
	return nil
}

// finish runs at the end of input: merges the trailer, reports counts,
// settles the time origin.
func (r *Reader) finish() error {
	if len(r.trailer) > 0 {
		if err := r.mergeTrailer(); err != nil {
			r.err = err
			return err
		}
	}
	if r.warns.suppressed > 0 {
		r.opts.warnf(fmt.Sprintf("%s: %d more row warnings not shown", r.name, r.warns.suppressed))
	}
	if r.skipped > 0 {
		r.opts.warnf(fmt.Sprintf("%s: skipped %d malformed rows (lenient)", r.name, r.skipped))
	}
	if err := r.origin.settle(r.name); err != nil {
		r.err = err
		return err
	}
	r.err = io.EOF
	return io.EOF
}

func (r *Reader) mergeTrailer() error {
	m := lineMap{phys: r.trailerLines, colShift: 3}
	tn, err := parseYAML(r.trailer, r.name, m, &r.opts)
	if err != nil || tn == nil {
		return err
	}
	// Decode the trailer alone for its warnings and errors, then merge.
	if _, err := decodeHeaderNode(tn, r.name, r.opts, true); err != nil {
		return err
	}
	if err := mergeTrailer(r.hdrNode, tn, r.name, ""); err != nil {
		return err
	}
	quiet := r.opts
	quiet.Warn = nil
	h, err := decodeHeaderNode(r.hdrNode, r.name, quiet, false)
	if err != nil {
		return err
	}
	*r.hdr = *h
	return nil
}

// Header is the trace header: the one given to or found by Open, with a
// single stream's trailer merged in once Read has returned io.EOF. It is nil
// for a Reader made by NewReader.
func (r *Reader) Header() *Header { return r.hdr }

// Name is the file name used in messages.
func (r *Reader) Name() string { return r.name }

// Line is the physical line where the row last returned by Read starts.
func (r *Reader) Line() int { return r.rowLine }

// Columns reports which optional and extension columns the file has, so a
// tool rewriting the trace can keep them.
func (r *Reader) Columns() Columns { return r.cols }

// Skipped is the number of rows skipped in lenient mode so far.
func (r *Reader) Skipped() int { return r.skipped }

// Origin is the file's time origin (docs/tracev2.md §5), known once Read has returned
// io.EOF; before that it is an error.
func (r *Reader) Origin() (Origin, error) {
	if r.err != io.EOF {
		return Origin{}, fmt.Errorf("%s: time origin is known only after the last row", r.name)
	}
	return r.origin.result, nil
}

// OriginSoFar is the time origin of the rows read so far (the rule Origin
// applies to the whole file, applied to them): the origin of a consumer
// that stops reading before the end. After io.EOF it is Origin.
func (r *Reader) OriginSoFar() (Origin, error) {
	if r.err == io.EOF {
		return r.origin.result, nil
	}
	t := r.origin
	if err := t.settle(r.name); err != nil {
		return Origin{}, err
	}
	return t.result, nil
}

// Normalize makes Read shift every later record by o (see Origin.Normalize),
// for a consumer that learnt the origin in an earlier pass (ScanOrigin).
func (r *Reader) Normalize(o Origin) { r.norm = &o }

// Close closes the files Open opened; it is a no-op for NewReader.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	c := r.closer
	r.closer = nil
	return c.Close()
}

// fieldError builds the located error for field i.
func (r *Reader) fieldError(i int, msg string) error {
	name := ""
	if i < len(r.bind) {
		name = r.bind[i].name()
	}
	return &Error{File: r.name, Line: r.rowLine, Column: i + 1, What: "column " + name, Msg: msg}
}

// warnField warns about field i of the current row; msg makes the message
// only when it will be shown (a reader without Options.Warn, or past the
// first warnings, only counts: every row of an imported trace may warn).
func (r *Reader) warnField(i int, msg func() string) {
	if !r.warns.shows() {
		r.warns.add("")
		return
	}
	r.warns.add(r.fieldError(i, msg()).Error())
}
