package cli

import (
	"io"
	"os"

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
		return nil, path, WithCode(ExitUsage, err)
	}
	return f, path, nil
}

// Output is a data destination that never looks complete when it is not:
// a regular file is written to a hidden temporary sibling and renamed into
// place by Commit; stdout, a device or a FIFO is written directly (see
// internal/outfile).
type Output struct {
	w io.Writer
	f *outfile.File
}

// CreateOutput opens path for writing; "" and "-" mean stdout.
func CreateOutput(path string, stdout io.Writer) (*Output, error) {
	if path == "" || path == "-" {
		return &Output{w: stdout}, nil
	}
	f, err := outfile.Create(path)
	if err != nil {
		return nil, err
	}
	return &Output{w: f, f: f}, nil
}

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) { return o.w.Write(p) }

// Commit makes a file output visible under its final name.
func (o *Output) Commit() error {
	if o.f == nil {
		return nil
	}
	return o.f.Commit()
}

// Abort discards an uncommitted file output. It is safe after Commit.
func (o *Output) Abort() {
	if o.f != nil {
		o.f.Abort()
	}
}
