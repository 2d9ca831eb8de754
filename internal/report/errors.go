package report

import (
	"fmt"
	"strings"

	"servesim/internal/exitcode"
)

// InputError is a problem with the inputs or the settings: a duplicate id, no
// matched pairs, a malformed gate expression, a negative RTT. main maps it to
// exit code 2.
type InputError struct {
	Err error
}

func (e *InputError) Error() string { return e.Err.Error() }

// Unwrap gives the wrapped cause.
func (e *InputError) Unwrap() error { return e.Err }

// ExitCode is 2: bad usage or invalid input, as for every binary.
func (e *InputError) ExitCode() int { return exitcode.Usage }

func inputErrorf(format string, a ...any) error {
	return &InputError{Err: fmt.Errorf(format, a...)}
}

// GateError says that at least one CI gate failed. Failures name each failed gate.
// main maps it to exit code 3, after every output has been written.
type GateError struct {
	Failures []string
}

func (e *GateError) Error() string {
	return "calibrate: gate failed: " + strings.Join(e.Failures, "; ")
}

// ExitCode is 3: a calibrate assertion was not met (docs/calibrate.md §12).
func (e *GateError) ExitCode() int { return exitcode.Assertion }
