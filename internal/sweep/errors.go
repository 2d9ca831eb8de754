package sweep

import (
	"fmt"

	"servesim/internal/exitcode"
)

// Pos is where something was written: a line and column of a file, or a
// column in the value of a flag (Line 0).
type Pos struct {
	File string // file name, or the flag, e.g. "--grid"
	Line int    // 1-based; 0 for a flag
	Col  int    // 1-based; 0 = unknown
}

func (p Pos) String() string {
	switch {
	case p.Line > 0 && p.Col > 0:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
	case p.Line > 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	case p.Col > 0:
		return fmt.Sprintf("%s: column %d", p.File, p.Col)
	}
	return p.File
}

// shift moves a position n columns along its line (to a part of a value
// written on one line).
func (p Pos) shift(n int) Pos {
	if p.Col > 0 {
		p.Col += n
	}
	return p
}

// InputError is a bad sweep description (exit code 2): where, which field,
// and what is wrong.
type InputError struct {
	Pos   Pos
	Field string // e.g. "grid.rate", "slo"; may be empty
	Msg   string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", e.Pos, e.Field, e.Msg)
}

// ExitCode is 2: invalid input.
func (e *InputError) ExitCode() int { return exitcode.Usage }

func inputErr(pos Pos, field, format string, a ...any) *InputError {
	return &InputError{Pos: pos, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// NotMetError says that no case of a sweep meets its SLO (exit code 3, like
// a calibrate or observe assertion that does not hold). The tables are
// written before it is returned.
type NotMetError struct{ Msg string }

func (e *NotMetError) Error() string { return e.Msg }

// ExitCode is 3: an assertion not met.
func (e *NotMetError) ExitCode() int { return exitcode.Assertion }
