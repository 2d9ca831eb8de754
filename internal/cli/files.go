package cli

import (
	"io"
	"os"

	"servesim/internal/exitcode"
	"servesim/internal/outfile"
)

// StdinName is how errors name standard input.
const StdinName = "<stdin>"

// OpenInput opens path for reading; "" and "-" mean stdin. The returned name
// is what error messages should call the input.
func OpenInput(path string, stdin io.Reader) (io.ReadCloser, string, error) {
	if path == "" || path == "-" {
		return io.NopCloser(stdin), StdinName, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, exitcode.WithCode(exitcode.Usage, err)
	}
	return f, path, nil
}

// Output is a data destination that never looks complete when it is not
// (outfile.Output).
type Output = outfile.Output

// CreateOutput opens path for writing; "" and "-" mean stdout.
func CreateOutput(path string, stdout io.Writer) (*Output, error) { return outfile.Open(path, stdout) }
