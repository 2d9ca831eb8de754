package tracev2

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"servesim/internal/clip"
)

// Error is a malformed-input error located in a file. Its text is one line:
//
//	trace.csv:412:11: column output_tokens: "-3" is negative
//	obs.csv:9:57: csv syntax: bare " in unquoted field
//	run.yaml:4:13: key server.tensor_parallel: "two" is not an integer
//	trace.csv: no column row
//
// Line is the 1-based physical line (header lines of a single stream count; a
// row spanning several lines reports the line where it starts). Column is the
// 1-based field number for value errors and the 1-based character position for
// syntax errors. Line 0 means the error concerns the whole file, and the
// position is left out of the text.
//
// Every Error is bad input: ExitCode returns 2, the exit code the CLI maps it to.
type Error struct {
	File   string // file name as given; "<stdin>" for standard input
	Line   int    // 1-based physical line, 0 = whole file
	Column int    // 1-based field number or character position
	What   string // the place inside the line: "column NAME", "csv syntax", "key PATH", "yaml syntax", "row"
	Msg    string // what is wrong
	Err    error  // underlying cause, if any (for errors.Is); its text is already in Msg
}

// Error formats the one-line message.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		col := e.Column
		if col < 1 {
			col = 1
		}
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(col))
	}
	b.WriteString(": ")
	if e.What != "" {
		b.WriteString(e.What)
		b.WriteString(": ")
	}
	b.WriteString(BoundMessage(e.Msg))
	return b.String()
}

// maxMsg bounds the text of a message, so that no error quotes a whole
// file whatever its cause quoted.
const maxMsg = 400

// BoundMessage shortens a message to at most 400 bytes, on a character
// boundary, marking the cut with "…": what an error line may say of its
// cause (the importers' errors use it too).
func BoundMessage(s string) string { return BoundText(s, maxMsg) }

// BoundText shortens s to at most limit bytes (clip.Text).
func BoundText(s string, limit int) string { return clip.Text(s, limit) }

// ExitCode is 2: a malformed input is a usage error at the command line.
func (e *Error) ExitCode() int { return 2 }

// Unwrap gives the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// StdinName is the file name used in messages for "-".
const StdinName = "<stdin>"

// maxShown bounds how much of a bad value a message quotes.
const maxShown = 48

// quote renders a value for a message: Go-quoted (so control characters and
// line breaks never split the one-line message) and cut to maxShown bytes.
func quote(b []byte) string {
	if len(b) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		return strconv.Quote(string(b[:cut])) + "…"
	}
	return strconv.Quote(string(b))
}

// QuoteName shows a name read from input (a column, a key, a field) in a
// message: as it is when it is a plain short name, else quoted and cut,
// so that no character of it can break or forge a line of stderr.
func QuoteName(s string) string {
	plain := len(s) > 0 && len(s) <= maxShown
	for _, c := range s {
		plain = plain && (c == '_' || c == '-' || c == '.' || c == '[' || c == ']' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
	}
	if plain {
		return s
	}
	return quote([]byte(s))
}

// oneLine makes an arbitrary message safe for a one-line error text.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// maxWarnings is how many row-level warnings of one kind a reader reports
// before it only counts them (docs/tracev2.md §7).
const maxWarnings = 20

// warnLimiter forwards the first maxWarnings messages and counts the rest.
type warnLimiter struct {
	warn       func(string)
	shown      int
	suppressed int
}

// shows reports whether the next message would reach warn.
func (w *warnLimiter) shows() bool { return w.warn != nil && w.shown < maxWarnings }

func (w *warnLimiter) add(msg string) {
	if w.shown < maxWarnings {
		w.shown++
		if w.warn != nil {
			w.warn(msg)
		}
		return
	}
	w.suppressed++
}

// Options tune reading. The zero value reads strictly by the spec's defaults:
// unknown header keys warn, the first malformed row stops reading.
type Options struct {
	// Strict turns unknown header keys (top-level or nested) into errors.
	Strict bool
	// Lenient skips malformed data rows instead of stopping: each skip is a
	// warning with the row's location (the first 20, then a count at the end).
	Lenient bool
	// Warn receives warnings, one line each, already located
	// ("file:line:col: ..."). Nil discards them. The package never writes to
	// stderr itself.
	Warn func(msg string)
	// DeploymentKey, if set, checks the value of one key of
	// x_ext.deployment (the package knows no deployment); its error is
	// reported at the value's place in the header.
	DeploymentKey func(key string, value any) error
}

func (o *Options) warnf(msg string) {
	if o.Warn != nil {
		o.Warn(msg)
	}
}
