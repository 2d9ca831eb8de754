package input

import (
	"fmt"
	"io"
	"os"

	"servesim/internal/tracev2"
)

// usageError is bad usage or bad input: exit code 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// ExitCode is 2: bad usage or invalid input.
func (e *usageError) ExitCode() int { return 2 }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// unrecognised is a TraceV2 reading error of an input whose content named
// no format: it adds that no foreign shape was recognised either.
type unrecognised struct{ err error }

func (u *unrecognised) Error() string {
	return u.err.Error() + " (not a TraceV2 trace, and not the shape of an Azure, Mooncake, Vidur, vllm-bench or LLMServingSim trace either; --from FORMAT forces one)"
}

func (u *unrecognised) Unwrap() error { return u.err }

// OpenFile opens a file a user named (a trace, or a companion of one) for
// reading; "" and "-" mean stdin. The name is what messages call the
// input; a file that cannot be opened is bad input (exit code 2).
func OpenFile(path string, stdin io.Reader) (io.ReadCloser, string, error) {
	if path == "" || path == "-" {
		return io.NopCloser(stdin), tracev2.StdinName, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, &usageError{err}
	}
	return f, path, nil
}
