package tracev2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"servesim/internal/outfile"
)

// TraceWriter writes a whole trace, header and rows, in either form. The
// header goes out before the first row and every row is written whole as it
// comes (see Writer), so an interrupted producer leaves a valid trace of the
// rows written so far. Close writes the facts known only at the end.
type TraceWriter struct {
	form    Form
	rows    *Writer
	first   *Header // the header as written at the start
	out     io.Writer
	file    *os.File // two-file form: the data file
	hdrPath string
	withExt bool
	closed  bool
}

// NewStreamWriter writes the single-stream form to w (stdout or a pipe): the
// header as "# " lines, x_ext included when set, then the column row for
// cols. h is copied; later changes go in through Close.
func NewStreamWriter(w io.Writer, h *Header, cols Columns) (*TraceWriter, error) {
	if w == nil {
		return nil, errors.New("tracev2: NewStreamWriter: nil io.Writer")
	}
	text, err := headerYAML(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(prefixLines(text, "#")); err != nil {
		return nil, fmt.Errorf("write trace header: %w", err)
	}
	rows, err := NewWriter(w, cols)
	if err != nil {
		return nil, err
	}
	return &TraceWriter{form: FormSingle, rows: rows, first: h.Clone(), out: w}, nil
}

// WriteStream writes a whole single-stream trace to w: the header h, the
// column row for cols, recs in order, and the trailer (as NewStreamWriter,
// Write and Close(nil) do one by one).
func WriteStream(w io.Writer, h *Header, cols Columns, recs []Record) error {
	tw, err := NewStreamWriter(w, h, cols)
	if err != nil {
		return err
	}
	return tw.writeAll(recs)
}

// WriteFiles writes a whole two-file trace: the header YAML at headerPath
// and recs at dataPath (as CreateFiles, Write and Close(nil) do one by one).
func WriteFiles(headerPath, dataPath string, h *Header, cols Columns, withExt bool, recs []Record) error {
	tw, err := CreateFiles(headerPath, dataPath, h, cols, withExt)
	if err != nil {
		return err
	}
	return tw.writeAll(recs)
}

// writeAll writes recs and closes the trace; on an error the trace is left
// unfinished (a two-file trace's data file is closed).
func (t *TraceWriter) writeAll(recs []Record) error {
	for i := range recs {
		if err := t.Write(&recs[i]); err != nil {
			if t.file != nil {
				t.file.Close()
			}
			return fmt.Errorf("tracev2: write request %d: %w", recs[i].RequestID, err)
		}
	}
	return t.Close(nil)
}

// PrefixPaths gives the two-file names for --trace-output PREFIX:
// PREFIX.yaml, PREFIX.csv and the ITL companion PREFIX.itl.csv.
func PrefixPaths(prefix string) (header, data, itl string) {
	return prefix + ".yaml", prefix + ".csv", prefix + ".itl.csv"
}

// CreateFiles writes the two-file form: the header YAML at headerPath
// (atomically) and the data CSV at dataPath, created or truncated. With
// withExt (the default of every command), x_ext is in the header; without
// it (--blis-compatible-header) the header holds only the keys BLIS's
// strict loader accepts and x_ext goes to the sidecar ExtSidecarPath, which
// readers merge back. Close rewrites the header atomically with the final
// facts.
func CreateFiles(headerPath, dataPath string, h *Header, cols Columns, withExt bool) (*TraceWriter, error) {
	if headerPath == "" || dataPath == "" {
		return nil, errors.New("tracev2: CreateFiles: empty header or data path")
	}
	if headerPath == dataPath {
		return nil, fmt.Errorf("tracev2: CreateFiles: header and data are the same file %s", headerPath)
	}
	t := &TraceWriter{form: FormTwoFile, first: h.Clone(), hdrPath: headerPath, withExt: withExt}
	if err := t.writeHeaderFile(h); err != nil {
		return nil, err
	}
	f, err := os.Create(dataPath)
	if err != nil {
		return nil, fmt.Errorf("create trace data: %w", err)
	}
	rows, err := NewWriter(f, cols)
	if err != nil {
		f.Close()
		return nil, err
	}
	t.rows, t.file = rows, f
	return t, nil
}

// Write writes one row.
func (t *TraceWriter) Write(rec *Record) error {
	if t.closed {
		return errors.New("tracev2: write to a closed trace")
	}
	return t.rows.Write(rec)
}

// Close finishes the trace with final, the header as it stands at the end
// (nil = unchanged). In the single-stream form the keys that final adds to
// the header written at the start (e.g. observed_kv_metrics,
// x_ext.interrupted) go to the "#+ " trailer; changing a key already written
// is an error there. In the two-file form the header file is rewritten
// atomically with final, and the data file is closed. The stream's own
// io.Writer is not closed.
func (t *TraceWriter) Close(final *Header) error {
	if t.closed {
		return nil
	}
	t.closed = true
	var errs []error
	if t.rows != nil && t.rows.err != nil {
		// A failed write (a full disk) cut the trace short after its last
		// whole row: say so where the form has room for it (x_ext).
		if final == nil {
			final = t.first
		}
		final = final.Clone()
		if final.XExt == nil {
			final.XExt = &Ext{}
		}
		cut := true
		final.XExt.Interrupted = &cut
	}
	if final != nil {
		switch t.form {
		case FormSingle:
			tr, err := trailerYAML(t.first, final)
			if err != nil {
				errs = append(errs, err)
			} else if tr != nil {
				if _, err := t.out.Write(prefixLines(tr, "#+")); err != nil {
					errs = append(errs, fmt.Errorf("write trace trailer: %w", err))
				}
			}
		case FormTwoFile:
			if err := t.writeHeaderFile(final); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if t.file != nil {
		if err := t.file.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close trace data: %w", err))
		}
	}
	return errors.Join(errs...)
}

// writeHeaderFile writes the header YAML. Without withExt, x_ext goes to
// the sidecar (ExtSidecarPath) and the header keeps only BLIS's keys; with
// it, a sidecar left by an earlier BLIS-compatible write of the same trace
// is removed, so the two never disagree.
func (t *TraceWriter) writeHeaderFile(h *Header) error {
	side := ExtSidecarPath(t.hdrPath)
	if t.withExt || h == nil || h.XExt == nil {
		text, err := headerYAML(h)
		if err != nil {
			return err
		}
		if err := writeFileAtomic(t.hdrPath, text); err != nil {
			return err
		}
		if err := os.Remove(side); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("remove the stale x_ext sidecar: %w", err)
		}
		return nil
	}
	if err := h.Validate(); err != nil {
		return err
	}
	var n yaml.Node
	if err := n.Encode(struct {
		XExt *Ext `yaml:"x_ext"`
	}{h.XExt}); err != nil {
		return fmt.Errorf("encode x_ext: %w", err)
	}
	ext, err := encodeNode(&n)
	if err != nil {
		return err
	}
	h = h.Clone()
	h.XExt = nil
	text, err := headerYAML(h)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(side, ext); err != nil {
		return err
	}
	return writeFileAtomic(t.hdrPath, text)
}

// ExtSidecarPath is the file that keeps x_ext beside a header written for
// BLIS's strict loader: NAME.ext.yaml for NAME.yaml (or NAME.yml). Readers
// merge it into a header that has no x_ext of its own.
func ExtSidecarPath(headerPath string) string {
	base := strings.TrimSuffix(headerPath, ".gz")
	for _, ext := range []string{".yaml", ".yml"} {
		if strings.HasSuffix(base, ext) {
			return strings.TrimSuffix(base, ext) + ".ext.yaml"
		}
	}
	return base + ".ext.yaml"
}

// writeFileAtomic writes a header file through outfile, so a reader never
// sees a half-written header and a device or FIFO is written into, never
// replaced.
func writeFileAtomic(path string, data []byte) error {
	if err := outfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("write trace header: %w", err)
	}
	return nil
}

// prefixLines puts prefix+" " before every line of text, or prefix alone
// before an empty line.
func prefixLines(text []byte, prefix string) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(text, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		body := bytes.TrimSuffix(line, []byte("\n"))
		out.WriteString(prefix)
		if len(body) > 0 {
			out.WriteByte(' ')
			out.Write(body)
		}
		out.WriteByte('\n')
	}
	return out.Bytes()
}
