package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Exit codes shared by every binary: 0 success, 1 runtime failure, 2 bad
// usage or invalid input, 3 an assertion not met, 130 interrupted.
const (
	ExitOK          = 0
	ExitFailure     = 1   // runtime failure
	ExitUsage       = 2   // bad usage or invalid input
	ExitAssertion   = 3   // a calibrate or observe assertion was not met
	ExitInterrupted = 130 // interrupted after a clean flush
)

// ExitCoder is implemented by errors that know their exit code. Internal
// packages give their input errors an ExitCode method returning 2 without
// importing this package.
type ExitCoder interface{ ExitCode() int }

type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }
func (e *codedError) ExitCode() int { return e.code }

// WithCode wraps err so that ExitCode reports code for it.
func WithCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &codedError{code: code, err: err}
}

// Usagef is a usage or input error (exit 2).
func Usagef(format string, args ...any) error {
	return &codedError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// ExitCode maps an error to the process exit code: nil is 0, an error carrying
// a code keeps it, an interrupted context is 130, anything else is 1.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ec ExitCoder
	if errors.As(err, &ec) && ec.ExitCode() != 0 {
		return ec.ExitCode()
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitFailure
}

// Report prints err on stderr as one line prefixed by the program name
// (control characters escaped, length bounded: errorLine) and returns the
// exit code for it.
func Report(prog string, err error, stderr io.Writer) int {
	code := ExitCode(err)
	if err != nil && err.Error() != "" {
		fmt.Fprintf(stderr, "%s: %s\n", prog, errorLine(err.Error()))
	}
	return code
}
