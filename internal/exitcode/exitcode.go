// Package exitcode is the one home of the process exit codes every binary
// shares: 0 success, 1 runtime failure, 2 bad usage or invalid input, 3 an
// assertion not met, 130 interrupted after a clean flush. Library packages
// mark their errors with a code here; main reads it back with Of. It is a
// leaf: it imports nothing of the module.
package exitcode

import (
	"context"
	"errors"
	"fmt"
)

// The exit codes.
const (
	OK          = 0
	Failure     = 1   // runtime failure
	Usage       = 2   // bad usage or invalid input
	Assertion   = 3   // a calibrate or observe assertion was not met
	Interrupted = 130 // interrupted after a clean flush
)

// Coder is implemented by errors that know their exit code: Error, and the
// domain errors that carry more than a message (a place, a field).
type Coder interface{ ExitCode() int }

// Error is an error that carries its exit code. Its text is its cause's.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap gives the cause.
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is the code the error carries.
func (e *Error) ExitCode() int { return e.Code }

// WithCode wraps err so that Of reports code for it; nil stays nil.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// AsUsage marks err as bad usage or invalid input (exit 2); nil stays nil.
func AsUsage(err error) error { return WithCode(Usage, err) }

// Usagef is a usage or input error (exit 2).
func Usagef(format string, args ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, args...)}
}

// Of maps an error to the process exit code: nil is 0, an error carrying a
// non-zero code (found through wrapping) keeps it, an interrupted context
// is 130, anything else is 1.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var c Coder
	if errors.As(err, &c) && c.ExitCode() != 0 {
		return c.ExitCode()
	}
	if errors.Is(err, context.Canceled) {
		return Interrupted
	}
	return Failure
}
