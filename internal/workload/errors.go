package workload

import (
	"fmt"
	"strings"
)

// Error is a bad-input error: a spec, a flag value, or a data file the user
// gave us. It names the place (file:line:column, or the flag) and the field
// path, and maps to exit code 2 (bad usage or invalid input).
//
// Error() reads "File:Line:Column: Path: Msg", leaving out the parts that are
// unknown, or "Flag: Msg" for a command-line option.
type Error struct {
	File   string // spec or data file name as given; "" when not from a file
	Line   int    // 1-based; 0 = unknown
	Column int    // 1-based; 0 = unknown
	Flag   string // "--rate" for option errors; "" otherwise
	Path   string // field path inside the spec, e.g. "clients[1].arrival.cv"
	Msg    string
	Err    error // wrapped cause, if any (its text follows Msg)
}

func (e *Error) Error() string {
	var b strings.Builder
	place := e.Flag
	if place == "" && e.File != "" {
		place = e.File
		if e.Line > 0 {
			place += fmt.Sprintf(":%d", e.Line)
			if e.Column > 0 {
				place += fmt.Sprintf(":%d", e.Column)
			}
		}
	}
	for _, part := range []string{place, e.Path} {
		if part != "" {
			b.WriteString(part)
			b.WriteString(": ")
		}
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		if e.Msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is 2: every Error is bad usage or invalid input.
func (e *Error) ExitCode() int { return 2 }

// flagError is a usage error naming a command-line flag.
func flagError(flag, format string, args ...any) *Error {
	return &Error{Flag: flag, Msg: fmt.Sprintf(format, args...)}
}
