package infile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"servesim/internal/exitcode"
)

// ConfigBytes bounds a configuration file read whole: a deployment, a
// workload spec, a sweep file, prices, a model's config.json, a hardware
// file, server facts. The largest real ones are a few kilobytes.
const ConfigBytes = 16 << 20

// TooLargeError is an input longer than its bound.
type TooLargeError struct {
	Name  string // the file, as the user named it
	Limit int64  // bytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the bound on this input", e.Name, Size(e.Limit))
}

// ExitCode is 2: invalid input.
func (e *TooLargeError) ExitCode() int { return exitcode.Usage }

// ReadFile reads the file at path whole, up to limit bytes; a longer one is
// a *TooLargeError. A regular file's size is checked before anything is
// read; anything else (a device, a FIFO) is read up to limit+1 bytes. A
// file that cannot be opened or read gives the *fs.PathError of os.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, &TooLargeError{Name: path, Limit: limit}
	}
	return Read(f, path, limit)
}

// Read reads r to its end, up to limit bytes; a longer input is a
// *TooLargeError naming name.
func Read(r io.Reader, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Name: name, Limit: limit}
	}
	return data, nil
}

// Size writes a byte count for a message: "16 MiB", "512 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
