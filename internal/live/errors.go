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

// Shard is one worker's slice of a run fanned out over client machines:
// worker Index of Count. Request k belongs to the worker with k mod Count =
// Index. The zero value is "not sharded".
type Shard struct {
	Index int // 0-based, < Count
	Count int // ≥ 1 when sharded
}

// owns reports whether item k (0-based) belongs to this worker.
func (s Shard) owns(k int64) bool {
	if s.Count <= 1 {
		return true
	}
	return k%int64(s.Count) == int64(s.Index)
}

// sharded reports whether the run is split over more than one worker.
func (s Shard) sharded() bool { return s.Count > 1 }

// String is the flag form, "I/N" ("" when not sharded).
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// Session modes of a played trace and of the header's client.
const (
	sessionFixed      = "fixed"
	sessionClosedLoop = "closed-loop"
)
