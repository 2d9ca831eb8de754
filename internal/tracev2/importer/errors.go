package importer

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"servesim/internal/tracev2"
)

// Error is a malformed-input error at a place in the source file. Its text is
// `file:line:column: field NAME: what is wrong`, or `file:line:column: what is
// wrong` when no field is involved (syntax errors). See the package doc for
// what line and column count.
type Error struct {
	File   string // file name as given; "<stdin>" for standard input
	Line   int    // 1-based physical line
	Column int    // 1-based; see the package doc
	Field  string // field or column name in the source format; may be empty
	Msg    string // what is wrong, lower case
	Err    error  // underlying cause, if any
}

func (e *Error) Error() string {
	msg := tracev2.BoundMessage(e.Msg)
	if e.Field == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, msg)
	}
	return fmt.Sprintf("%s:%d:%d: field %s: %s", e.File, e.Line, e.Column, tracev2.QuoteName(e.Field), msg)
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is 2: bad input, as for every binary.
func (e *Error) ExitCode() int { return 2 }

// displayName is the file name used in errors.
func displayName(name string) string {
	if name == "" || name == "-" {
		return "<stdin>"
	}
	return name
}

// maxWarnings caps the warnings an importer keeps; later ones are counted.
const maxWarnings = 20

// warnings collects at most maxWarnings messages and counts the rest.
type warnings struct {
	list    []string
	dropped int
}

func (w *warnings) add(format string, args ...any) {
	if len(w.list) >= maxWarnings {
		w.dropped++
		return
	}
	w.list = append(w.list, fmt.Sprintf(format, args...))
}

func (w *warnings) all() []string {
	out := append([]string(nil), w.list...)
	if w.dropped > 0 {
		out = append(out, fmt.Sprintf("%d more warnings not shown", w.dropped))
	}
	return out
}

// lineCol maps a byte offset in b to a 1-based line and character column.
func lineCol(b []byte, off int) (line, col int) {
	if off > len(b) {
		off = len(b)
	}
	if off < 0 {
		off = 0
	}
	line, start := 1, 0
	for i := 0; i < off; i++ {
		if b[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return line, utf8.RuneCount(b[start:off]) + 1
}

// lineColAt maps a byte offset in ra to a 1-based line and character column,
// reading the prefix in chunks (used only when reporting an error).
func lineColAt(ra io.ReaderAt, off int64) (line, col int) {
	line = 1
	var lineStart []byte // bytes of the current line seen so far (capped)
	buf := make([]byte, 64<<10)
	pos := int64(0)
	runes := 0
	for pos < off {
		n := int64(len(buf))
		if off-pos < n {
			n = off - pos
		}
		m, err := ra.ReadAt(buf[:n], pos)
		chunk := buf[:m]
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				lineStart = append(lineStart, chunk...)
				break
			}
			line++
			lineStart = lineStart[:0]
			runes = 0
			chunk = chunk[i+1:]
		}
		// Count complete runes now and keep only a partial tail, so memory
		// stays small on a long line.
		if len(lineStart) > 8 {
			cut := len(lineStart) - 4
			for cut > 0 && !utf8.RuneStart(lineStart[cut]) {
				cut--
			}
			runes += utf8.RuneCount(lineStart[:cut])
			lineStart = append(lineStart[:0], lineStart[cut:]...)
		}
		pos += int64(m)
		if err != nil || m == 0 {
			break
		}
	}
	return line, runes + utf8.RuneCount(lineStart) + 1
}

// quote shows a CSV field value in an error message.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}
