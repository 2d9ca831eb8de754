package outfile

import "io"

// Output is a data destination that never looks complete when it is not:
// a regular file is written to a hidden temporary sibling and renamed into
// place by Commit (Create); stdout, a device or a FIFO is written directly.
type Output struct {
	w io.Writer
	f *File
}

// Open opens path for writing; "" and "-" mean stdout.
func Open(path string, stdout io.Writer) (*Output, error) {
	if path == "" || path == "-" {
		return &Output{w: stdout}, nil
	}
	f, err := Create(path)
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
