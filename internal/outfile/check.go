package outfile

import (
	"os"
	"path/filepath"
	"syscall"

	"servesim/internal/exitcode"
)

// Named is a file of a command line: the flag or argument that names it
// ("--results-path", "the trace"), and its path.
type Named struct {
	What, Path string
}

// Check refuses, before any work, outputs that would fail only once the
// work is done or would destroy what the work reads: an output that is a
// directory, or whose directory does not exist or cannot be written; an
// output that is the same file as an input (os.SameFile: another spelling,
// a symbolic or a hard link of it); two outputs that write one file. ""
// and "-" (stdout, stdin) are no files; an input that does not exist, or
// is not a regular file (a device, a FIFO), cannot be overwritten and is
// left alone. The error, exit 2, names both files.
func Check(outputs, inputs []Named) error {
	var ins []Named
	var inStats []os.FileInfo
	for _, in := range inputs {
		if in.Path == "" || in.Path == "-" {
			continue
		}
		if st, err := os.Stat(in.Path); err == nil && st.Mode().IsRegular() {
			ins, inStats = append(ins, in), append(inStats, st)
		}
	}
	seen := map[string]Named{}
	for _, out := range outputs {
		if out.Path == "" || out.Path == "-" {
			continue
		}
		if err := writable(out); err != nil {
			return err
		}
		st, err := os.Stat(out.Path)
		if err == nil && st.Mode().IsRegular() {
			for i, in := range ins {
				if os.SameFile(st, inStats[i]) {
					return exitcode.Usagef("%s %s is the same file as %s %s: writing it would destroy what is read; name another file",
						out.What, out.Path, in.What, in.Path)
				}
			}
		}
		abs, aerr := filepath.Abs(out.Path)
		if aerr != nil {
			abs = out.Path
		}
		if other, ok := seen[abs]; ok {
			return exitcode.Usagef("%s and %s both write %s", other.What, out.What, out.Path)
		}
		seen[abs] = out
	}
	return nil
}

// writable refuses an output that is a directory, or a new file whose
// directory does not exist or cannot be written.
func writable(out Named) error {
	st, err := os.Stat(out.Path)
	if err == nil {
		if st.IsDir() {
			return exitcode.Usagef("%s %s is a directory: name a file", out.What, out.Path)
		}
		return nil // an existing file, device or FIFO: opening it says the rest
	}
	dir := filepath.Dir(out.Path)
	dst, err := os.Stat(dir)
	switch {
	case err != nil || !dst.IsDir():
		return exitcode.Usagef("%s %s: directory %s does not exist", out.What, out.Path, dir)
	case syscall.Access(dir, 0x2|0x1) != nil: // W_OK|X_OK: a file can be made there
		return exitcode.Usagef("%s %s: directory %s is not writable", out.What, out.Path, dir)
	}
	return nil
}
