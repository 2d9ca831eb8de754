package layout

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository may track outside a
// testdata/ folder: anything bigger is an artefact or a data set that
// belongs in testdata/ (or outside the repository), not in the source tree.
const maxTrackedBytes = 5 << 20

// executableKind names the executable format a file's first bytes announce
// (ELF, Mach-O, PE), or "" for anything else. head holds the file's first
// bytes; peAt reads 4 bytes at an offset, for the PE signature whose place
// the DOS header gives.
func executableKind(head []byte, peAt func(off int64) []byte) string {
	if len(head) < 4 {
		return ""
	}
	switch {
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "ELF"
	case bytes.HasPrefix(head, []byte{0xfe, 0xed, 0xfa, 0xce}), bytes.HasPrefix(head, []byte{0xfe, 0xed, 0xfa, 0xcf}),
		bytes.HasPrefix(head, []byte{0xce, 0xfa, 0xed, 0xfe}), bytes.HasPrefix(head, []byte{0xcf, 0xfa, 0xed, 0xfe}),
		bytes.HasPrefix(head, []byte{0xca, 0xfe, 0xba, 0xbe}):
		return "Mach-O"
	case bytes.HasPrefix(head, []byte("MZ")) && len(head) >= 0x40:
		// "MZ" alone could begin a text file: a PE image also has "PE\0\0"
		// at the offset its DOS header stores at 0x3c.
		off := int64(binary.LittleEndian.Uint32(head[0x3c:0x40]))
		if bytes.Equal(peAt(off), []byte("PE\x00\x00")) {
			return "PE"
		}
	}
	return ""
}

// inTestdata reports whether a slash-separated path lies under a testdata/
// folder, at any depth.
func inTestdata(path string) bool {
	for _, part := range strings.Split(path, "/") {
		if part == "testdata" {
			return true
		}
	}
	return false
}

// trackedProblems says what is wrong with tracking the file at path (size
// in bytes): nothing, its size, its being an executable, or both.
func trackedProblems(path string, size int64) ([]string, error) {
	var problems []string
	if size > maxTrackedBytes {
		problems = append(problems, "is over 5 MB")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 64)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	kind := executableKind(head[:n], func(off int64) []byte {
		b := make([]byte, 4)
		if _, err := f.ReadAt(b, off); err != nil {
			return nil
		}
		return b
	})
	if kind != "" {
		problems = append(problems, "is a built "+kind+" executable")
	}
	return problems, nil
}

// TestNoBuiltOrHugeFilesTracked keeps built binaries and files over 5 MB
// out of the repository, testdata/ folders aside: a clone should hold
// source, not artefacts of someone's build.
func TestNoBuiltOrHugeFilesTracked(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the tracked files cannot be listed")
	}
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v)", err)
	}
	checked := 0
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if path == "" || inTestdata(path) {
			continue
		}
		full := filepath.Join(root, filepath.FromSlash(path))
		info, err := os.Lstat(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree, not yet in the index
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		checked++
		problems, err := trackedProblems(full, info.Size())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, p := range problems {
			t.Errorf("%s %s (%d bytes): remove it from git (git rm --cached) and ignore it in .gitignore", path, p, info.Size())
		}
	}
	if checked == 0 {
		t.Fatal("git ls-files listed no file")
	}
}

func TestExecutableKind(t *testing.T) {
	pe := make([]byte, 64)
	copy(pe, "MZ")
	binary.LittleEndian.PutUint32(pe[0x3c:], 0x80)
	peSig := func(sig string) func(int64) []byte {
		return func(off int64) []byte {
			if off != 0x80 {
				return nil
			}
			return []byte(sig)
		}
	}
	none := func(int64) []byte { return nil }
	for _, tc := range []struct {
		name string
		head []byte
		at   func(int64) []byte
		want string
	}{
		{"elf", []byte("\x7fELF\x02\x01\x01"), none, "ELF"},
		{"mach-o 64", []byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, none, "Mach-O"},
		{"mach-o universal", []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}, none, "Mach-O"},
		{"pe", pe, peSig("PE\x00\x00"), "PE"},
		{"MZ text", pe, peSig("text"), ""},
		{"go source", []byte("package main\n"), none, ""},
		{"gzip", []byte{0x1f, 0x8b, 8, 0}, none, ""},
		{"short", []byte("\x7fE"), none, ""},
	} {
		if got := executableKind(tc.head, tc.at); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
