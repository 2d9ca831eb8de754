package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// Output is a data destination that never looks complete when it is not: a
// file is written to a hidden temporary sibling and renamed into place by
// Commit; stdout is written directly.
type Output struct {
	w    io.Writer
	f    *os.File
	path string
	done bool
}

// CreateOutput opens path for writing; "" and "-" mean stdout.
func CreateOutput(path string, stdout io.Writer) (*Output, error) {
	if path == "" || path == "-" {
		return &Output{w: stdout}, nil
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &Output{w: f, f: f, path: path}, nil
}

// Write implements io.Writer.
func (o *Output) Write(p []byte) (int, error) { return o.w.Write(p) }

// Commit makes a file output visible under its final name.
func (o *Output) Commit() error {
	if o.f == nil || o.done {
		return nil
	}
	o.done = true
	// CreateTemp makes the file private (0600); a data output is an
	// ordinary file like any other the user writes.
	if err := o.f.Chmod(0o644); err != nil {
		o.f.Close()
		os.Remove(o.f.Name())
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	if err := o.f.Close(); err != nil {
		os.Remove(o.f.Name())
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	if err := os.Rename(o.f.Name(), o.path); err != nil {
		os.Remove(o.f.Name())
		return fmt.Errorf("write %s: %w", o.path, err)
	}
	return nil
}

// Abort discards an uncommitted file output. It is safe after Commit.
func (o *Output) Abort() {
	if o.f == nil || o.done {
		return
	}
	o.done = true
	o.f.Close()
	os.Remove(o.f.Name())
}
