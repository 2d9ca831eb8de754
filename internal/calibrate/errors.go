package calibrate

import "fmt"

// usageError is bad usage or invalid input: exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// ExitCode is 2: bad usage or invalid input.
func (e *usageError) ExitCode() int { return 2 }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// asUsage marks err as bad usage or input; nil stays nil.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err: err}
}

// GateFailed says that at least one CI gate failed, after every output was
// written: exit code 3.
type GateFailed struct{ err error }

func (e *GateFailed) Error() string { return e.err.Error() }

// ExitCode is 3: a calibrate assertion was not met.
func (e *GateFailed) ExitCode() int { return 3 }
