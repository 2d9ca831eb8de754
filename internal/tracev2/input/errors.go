package input

import (
	"io"
	"os"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
)

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
		return nil, path, exitcode.AsUsage(err)
	}
	return f, path, nil
}
