package tracev2

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"servesim/internal/infile"
)

// Input names a trace to read, as the command line gives it.
type Input struct {
	// Path is the positional argument: a single stream, a data CSV or a
	// header YAML, detected from its first non-blank line; "-" is Stdin.
	Path string
	// HeaderPath (--trace-header) and DataPath (--trace-data) name the two
	// files explicitly; both together select the two-file form.
	HeaderPath string
	DataPath   string
	// Stdin is read for "-" (named "<stdin>" in messages).
	Stdin io.Reader
}

// Form is how a trace is laid out.
type Form int

const (
	FormTwoFile Form = iota + 1 // header YAML + data CSV
	FormSingle                  // "# " header lines, CSV, "#+ " trailer
)

// Open finds and opens a trace (docs/tracev2.md §6) and returns a Reader positioned at
// the first data row, plus the resolved header (the same pointer as
// Reader.Header; a single stream's trailer is merged into it when Read
// returns io.EOF). Gzip input and a byte-order mark are handled
// transparently. Resolution:
//
//   - HeaderPath and DataPath both set: the two-file form (Path must be empty);
//   - Path is detected from its first non-blank line: "# trace_version:" is a
//     single stream; "request_id" is a data CSV whose header is HeaderPath,
//     else the sibling .yaml, then .yml, else a default header (with a
//     warning); anything else is a header YAML whose data is DataPath, else
//     the sibling .csv (an error naming the path tried when missing);
//   - Path empty: HeaderPath alone or DataPath alone, siblings as above.
//
// The caller closes the Reader.
func Open(in Input, opts Options) (*Reader, *Header, error) {
	if in.Path == "-" && (in.HeaderPath == "-" || in.DataPath == "-") {
		return nil, nil, &Error{File: StdinName, Msg: "stdin can be read only once: give one of the trace, header and data as -"}
	}
	switch {
	case in.HeaderPath != "" && in.DataPath != "":
		if in.Path != "" {
			return nil, nil, &Error{File: in.Path, Msg: "give either a trace path or --trace-header with --trace-data, not both"}
		}
		return openTwoFile(in, in.HeaderPath, in.DataPath, opts)
	case in.Path == "" && in.HeaderPath != "":
		data, err := dataSibling(in.HeaderPath)
		if err != nil {
			return nil, nil, err
		}
		return openTwoFile(in, in.HeaderPath, data, opts)
	case in.Path == "" && in.DataPath != "":
		rc, br, name, err := openPath(in.DataPath, in.Stdin)
		if err != nil {
			return nil, nil, err
		}
		return openDataWithSiblingHeader(rc, br, name, in.DataPath, opts)
	case in.Path == "":
		return nil, nil, &Error{File: "trace", Msg: "no trace given: name a file, - for stdin, or --trace-header and --trace-data"}
	}
	rc, br, name, err := openPath(in.Path, in.Stdin)
	if err != nil {
		return nil, nil, err
	}
	form, blank, err := detect(br, name)
	if err != nil {
		closeQuiet(rc)
		return nil, nil, err
	}
	switch form {
	case detSingle:
		if in.HeaderPath != "" || in.DataPath != "" {
			closeQuiet(rc)
			return nil, nil, &Error{File: name, Msg: "is a single stream; --trace-header and --trace-data do not apply"}
		}
		r, err := openSingle(br, name, blank, opts)
		if err != nil {
			closeQuiet(rc)
			return nil, nil, err
		}
		r.closer = rc
		return r, r.hdr, nil
	case detCSV:
		if in.DataPath != "" {
			closeQuiet(rc)
			return nil, nil, &Error{File: name, Msg: "is a data CSV; --trace-data does not apply"}
		}
		if in.HeaderPath != "" {
			h, err := readHeaderPath(in.HeaderPath, in.Stdin, opts)
			if err != nil {
				closeQuiet(rc)
				return nil, nil, err
			}
			return finishData(rc, br, name, blank, h, opts)
		}
		return openDataWithSiblingHeader(rc, br, name, in.Path, opts)
	}
	// A header YAML.
	if in.HeaderPath != "" {
		closeQuiet(rc)
		return nil, nil, &Error{File: name, Msg: "is a header YAML; --trace-header does not apply"}
	}
	h, err := headerFromReader(br, name, blank, opts)
	closeQuiet(rc)
	if err == nil {
		h, err = withSidecar(h, in.Path, opts)
	}
	if err != nil {
		return nil, nil, err
	}
	data := in.DataPath
	if data == "" {
		if in.Path == "-" {
			return nil, nil, &Error{File: name, Msg: "is a header YAML; give its data with --trace-data"}
		}
		if data, err = dataSibling(in.Path); err != nil {
			return nil, nil, err
		}
	}
	drc, dbr, dname, err := openPath(data, in.Stdin)
	if err != nil {
		return nil, nil, err
	}
	return finishData(drc, dbr, dname, 0, h, opts)
}

func openTwoFile(in Input, headerPath, dataPath string, opts Options) (*Reader, *Header, error) {
	if headerPath == "-" && dataPath == "-" {
		return nil, nil, &Error{File: StdinName, Msg: "header and data cannot both be stdin"}
	}
	h, err := readHeaderPath(headerPath, in.Stdin, opts)
	if err != nil {
		return nil, nil, err
	}
	rc, br, name, err := openPath(dataPath, in.Stdin)
	if err != nil {
		return nil, nil, err
	}
	return finishData(rc, br, name, 0, h, opts)
}

func readHeaderPath(path string, stdin io.Reader, opts Options) (*Header, error) {
	rc, br, name, err := openPath(path, stdin)
	if err != nil {
		return nil, err
	}
	defer closeQuiet(rc)
	h, err := headerFromReader(br, name, 0, opts)
	if err != nil {
		return nil, err
	}
	return withSidecar(h, path, opts)
}

// withSidecar merges the x_ext sidecar of the header at path (written with
// --blis-compatible-header) into h, when h has no x_ext of its own.
func withSidecar(h *Header, path string, opts Options) (*Header, error) {
	if h.XExt != nil || path == "-" || path == "" {
		return h, nil
	}
	side := ExtSidecarPath(path)
	data, err := infile.ReadFile(side, maxHeaderBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	var tooLarge *infile.TooLargeError
	if errors.As(err, &tooLarge) {
		return nil, &Error{File: side, Msg: "x_ext sidecar is larger than " + infile.Size(maxHeaderBytes)}
	}
	if err != nil {
		return nil, &Error{File: side, Msg: "cannot read the x_ext sidecar: " + pathErrText(err), Err: err}
	}
	ext, _, err := decodeHeaderText(data, side, lineMap{first: 1}, opts, true)
	if err != nil {
		return nil, err
	}
	h.XExt = ext.XExt
	if p, msg := h.serverConflict(); p != "" {
		return nil, &Error{File: side, What: "key " + p, Msg: msg + " (" + path + "): the sidecar belongs to another trace"}
	}
	return h, nil
}

func headerFromReader(br *bufio.Reader, name string, blank int, opts Options) (*Header, error) {
	data, err := io.ReadAll(io.LimitReader(br, maxHeaderBytes+1))
	if err != nil {
		return nil, inputError(name, 0, err)
	}
	if len(data) > maxHeaderBytes {
		return nil, &Error{File: name, Msg: "header is larger than 16 MiB"}
	}
	h, _, err := decodeHeaderText(data, name, lineMap{first: blank + 1}, opts, false)
	return h, err
}

// openDataWithSiblingHeader reads the data CSV at path with the header found
// beside it, or a default header and a warning.
func openDataWithSiblingHeader(rc io.Closer, br *bufio.Reader, name, path string, opts Options) (*Reader, *Header, error) {
	var h *Header
	var tried []string
	if path != "-" {
		base := strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".csv")
		for _, ext := range []string{".yaml", ".yml"} {
			p := base + ext
			tried = append(tried, p)
			if _, err := os.Stat(p); err == nil {
				hh, err := readHeaderPath(p, nil, opts)
				if err != nil {
					closeQuiet(rc)
					return nil, nil, err
				}
				h = hh
				break
			}
		}
	}
	if h == nil {
		msg := "no header given"
		if len(tried) > 0 {
			msg = "no header file (tried " + strings.Join(tried, ", ") + ")"
		}
		opts.warnf(name + ": " + msg + "; using a default header: trace_version 3, warm_up_requests 0")
		h = DefaultHeader()
	}
	return finishData(rc, br, name, 0, h, opts)
}

func finishData(rc io.Closer, br *bufio.Reader, name string, line0 int, h *Header, opts Options) (*Reader, *Header, error) {
	r, err := newReader(br, name, line0, h, nil, opts)
	if err != nil {
		closeQuiet(rc)
		return nil, nil, err
	}
	r.closer = rc
	return r, h, nil
}

// dataSibling derives NAME.csv from NAME.yaml or NAME.yml and checks it exists.
func dataSibling(headerPath string) (string, error) {
	if headerPath == "-" {
		return "", &Error{File: StdinName, Msg: "is a header YAML; give its data with --trace-data"}
	}
	base := strings.TrimSuffix(headerPath, ".gz")
	switch {
	case strings.HasSuffix(base, ".yaml"):
		base = strings.TrimSuffix(base, ".yaml")
	case strings.HasSuffix(base, ".yml"):
		base = strings.TrimSuffix(base, ".yml")
	default:
		return "", &Error{File: headerPath, Msg: "is a header YAML without a .yaml or .yml suffix; give its data with --trace-data"}
	}
	p := base + ".csv"
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if _, err := os.Stat(p + ".gz"); err == nil {
		return p + ".gz", nil
	}
	return "", &Error{File: headerPath, Msg: "data file " + p + " not found", Err: fs.ErrNotExist}
}

// openPath opens a file, or stdin for "-", with gzip and BOM handling.
func openPath(path string, stdin io.Reader) (io.Closer, *bufio.Reader, string, error) {
	if path == "-" {
		if stdin == nil {
			return nil, nil, StdinName, &Error{File: StdinName, Msg: "no standard input available"}
		}
		br, err := newInput(stdin, StdinName)
		return nil, br, StdinName, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, path, &Error{File: path, Msg: "cannot open: " + pathErrText(err), Err: err}
	}
	br, err := newInput(f, path)
	if err != nil {
		f.Close()
		return nil, nil, path, err
	}
	return f, br, path, nil
}

func closeQuiet(c io.Closer) {
	if c != nil {
		_ = c.Close()
	}
}

// pathErrText is an *fs.PathError's reason without the repeated path.
func pathErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

const utf8BOM = "\xEF\xBB\xBF"

// newInput buffers r, decompresses gzip (detected by its magic bytes) and
// drops a leading UTF-8 byte-order mark.
func newInput(r io.Reader, name string) (*bufio.Reader, error) {
	br := bufio.NewReaderSize(r, bufSize)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, inputError(name, 0, err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, inputError(name, 0, err)
		}
		br = bufio.NewReaderSize(zr, bufSize)
	}
	if b, _ := br.Peek(3); string(b) == utf8BOM {
		_, _ = br.Discard(3)
	}
	return br, nil
}

// inputError classifies a read failure: corrupt compressed data is bad input
// (*Error, exit 2); anything else is a runtime failure.
func inputError(name string, line int, err error) error {
	var ce flate.CorruptInputError
	if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ce) {
		return &Error{File: name, Line: line, Column: 1, What: "gzip", Msg: oneLine(err.Error()), Err: err}
	}
	return fmt.Errorf("read %s: %w", name, err)
}

type detected int

const (
	detYAML detected = iota
	detSingle
	detCSV
)

const singlePrefix = "# trace_version:"

// detect skips blank lines and looks at the first non-blank one. It returns
// the number of blank lines consumed. Empty input is an error.
func detect(br *bufio.Reader, name string) (detected, int, error) {
	blank := 0
	for {
		b, err := br.Peek(len(singlePrefix))
		if len(b) == 0 {
			if err != nil && err != io.EOF {
				return 0, 0, inputError(name, blank+1, err)
			}
			return 0, 0, &Error{File: name, Line: blank + 1, Column: 1, What: "trace", Msg: "empty input"}
		}
		i := 0
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r') {
			i++
		}
		if i < len(b) && b[i] == '\n' {
			_, _ = br.Discard(i + 1)
			blank++
			continue
		}
		if i == len(b) && len(b) == len(singlePrefix) {
			// A long run of spaces: consume the whole line if it is blank.
			line, err := br.ReadSlice('\n')
			if len(bytes.TrimSpace(line)) != 0 || (err != nil && err != io.EOF && err != bufio.ErrBufferFull) {
				return 0, 0, &Error{File: name, Line: blank + 1, Column: 1, What: "trace", Msg: "line starts with a long run of spaces"}
			}
			blank++
			if err == io.EOF {
				return 0, 0, &Error{File: name, Line: blank, Column: 1, What: "trace", Msg: "empty input"}
			}
			continue
		}
		if i == len(b) {
			return 0, 0, &Error{File: name, Line: blank + 1, Column: 1, What: "trace", Msg: "empty input"}
		}
		switch {
		case bytes.HasPrefix(b, []byte(singlePrefix)):
			return detSingle, blank, nil
		case bytes.HasPrefix(b, []byte("request_id")):
			return detCSV, blank, nil
		}
		return detYAML, blank, nil
	}
}

// DetectForm reports the form of a trace stream from its first non-blank
// line, without consuming it from the returned reader: FormSingle for a
// single stream, FormTwoFile for a data CSV or a header YAML.
func DetectForm(r io.Reader, name string) (Form, io.Reader, error) {
	br, err := newInput(r, name)
	if err != nil {
		return 0, nil, err
	}
	d, _, err := detect(br, name)
	if err != nil {
		return 0, nil, err
	}
	if d == detSingle {
		return FormSingle, br, nil
	}
	return FormTwoFile, br, nil
}

// openSingle reads the "# " header lines of a single stream and starts the
// CSV reader after them. blank lines before the header were consumed.
func openSingle(br *bufio.Reader, name string, blank int, opts Options) (*Reader, error) {
	src := lineSource{br: br, name: name, line: blank}
	var text []byte
	var phys []int
	for {
		b, err := br.Peek(1)
		if len(b) == 0 || b[0] != '#' {
			if err != nil && err != io.EOF {
				return nil, inputError(name, src.line+1, err)
			}
			break
		}
		line, err := src.next()
		if err == errRowTooLong {
			return nil, &Error{File: name, Line: src.line, Column: 1, What: "header", Msg: "line is longer than 1 MiB"}
		}
		if err != nil {
			return nil, err
		}
		switch {
		case len(line) == 1:
		case line[1] == ' ':
			text = append(text, line[2:]...)
		default:
			return nil, &Error{File: name, Line: src.line, Column: 2, What: "header",
				Msg: `a header line must start with "# " (or be "#" alone)`}
		}
		if len(text) > maxHeaderBytes {
			return nil, &Error{File: name, Line: src.line, Column: 1, What: "header", Msg: "header is larger than 16 MiB"}
		}
		text = append(text, '\n')
		phys = append(phys, src.line)
	}
	m := lineMap{phys: phys, colShift: 2}
	h, node, err := decodeHeaderText(text, name, m, opts, false)
	if err != nil {
		return nil, err
	}
	return newReader(br, name, src.line, h, node, opts)
}
