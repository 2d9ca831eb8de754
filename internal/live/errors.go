package live

import "fmt"

// Exit codes the errors of this package carry (the suite's conventions):
// a usage or input error, an assertion not met, an interrupt after a clean
// flush. Any other error is a runtime failure (1).
const (
	exitFailure     = 1
	exitUsage       = 2
	exitAssertion   = 3
	exitInterrupted = 130
)

// codedError is an error that knows its process exit code: the command's
// shell reads it through an ExitCode method, so this package needs no CLI.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }
func (e *codedError) ExitCode() int { return e.code }

// withCode wraps err so that it exits with code (nil stays nil).
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &codedError{code: code, err: err}
}

// usagef is a usage or input error (exit 2).
func usagef(format string, args ...any) error {
	return &codedError{code: exitUsage, err: fmt.Errorf(format, args...)}
}
