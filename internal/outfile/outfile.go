package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks bounds the symbolic links followed from one name (Linux's own
// bound is 40).
const maxLinks = 40

// File is one output file, written in place or through a temporary sibling
// (see the package comment).
type File struct {
	f    *os.File
	name string // the name the data ends up under (a link's target)
	tmp  bool   // f is a temporary sibling to rename over name
	perm fs.FileMode
	done bool
}

// Create opens path for writing. Nothing is visible under a regular file's
// name before Commit.
func Create(path string) (*File, error) {
	if path == "" {
		return nil, errors.New("create: empty file name")
	}
	name, direct := resolve(path)
	if direct {
		flag := os.O_WRONLY
		if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() {
			// A descriptor such as /dev/stdout that the shell pointed at a
			// file: append, so what was written through it is kept.
			flag |= os.O_APPEND
		}
		f, err := os.OpenFile(name, flag, 0)
		if err != nil {
			return nil, fmt.Errorf("create %s: %w", path, err)
		}
		return &File{f: f, name: path}, nil
	}
	perm := fs.FileMode(0o644)
	if fi, err := os.Stat(name); err == nil {
		perm = fi.Mode().Perm() // replacing a file keeps its permissions
	}
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &File{f: f, name: name, tmp: true, perm: perm}, nil
}

// resolve follows path's symbolic links to the name a rename would have to
// replace. direct is true when the data must be written straight into that
// name: it exists and is not a regular file (a device, a FIFO, a socket, a
// directory), or it is reached through /proc (/dev/stdout, /dev/fd/N are
// links to descriptors there, whose own link target is not a file name).
func resolve(path string) (name string, direct bool) {
	name = path
	for range maxLinks {
		if dir, err := filepath.EvalSymlinks(filepath.Dir(name)); err == nil && underProc(dir) {
			return name, true
		}
		fi, err := os.Lstat(name)
		switch {
		case err != nil:
			return name, false // absent, or unreadable: CreateTemp says why
		case fi.Mode().IsRegular():
			return name, false
		case fi.Mode()&fs.ModeSymlink == 0:
			return name, true
		}
		link, err := os.Readlink(name)
		if err != nil {
			return name, true
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(name), link)
		}
		name = link
	}
	return path, true // a loop of links: opening it says so
}

func underProc(dir string) bool {
	abs, err := filepath.Abs(dir)
	return err == nil && (abs == "/proc" || strings.HasPrefix(abs, "/proc/"))
}

// Name is the name the data ends up under.
func (f *File) Name() string { return f.name }

// Write implements io.Writer.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// Commit makes the file visible under its name. After a failed Commit no
// temporary file is left.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	if !f.tmp {
		if err := f.f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
		return nil
	}
	tmp := f.f.Name()
	// CreateTemp makes the file private (0600); an output is an ordinary
	// file like any other the user writes.
	err := f.f.Chmod(f.perm)
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, f.name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", f.name, err)
	}
	return nil
}

// Abort discards an uncommitted file: a temporary file is removed, a
// device or FIFO written in place is closed. It is safe after Commit and
// after Abort.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.f.Close()
	if f.tmp {
		os.Remove(f.f.Name())
	}
}

// WriteFile writes data to path as Create, Write and Commit do, leaving no
// temporary file on any error.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("write %s: %w", f.name, err)
	}
	return f.Commit()
}
