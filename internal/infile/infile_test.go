package infile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"servesim/internal/exitcode"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// A sparse file of 3 GiB: refused from its size, nothing read.
	if err := f.Truncate(3 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			w.Write(make([]byte, 100))
			w.Close()
		}
	}()
	for _, c := range []struct {
		path, want string
		limit      int64
	}{
		{small, "", 5},
		{small, small + ": larger than 4 bytes, the bound on this input", 4},
		{big, big + ": larger than 16 MiB, the bound on this input", ConfigBytes},
		{"/dev/zero", "/dev/zero: larger than 1 KiB, the bound on this input", 1 << 10},
		{fifo, fifo + ": larger than 64 bytes, the bound on this input", 64},
	} {
		data, err := ReadFile(c.path, c.limit)
		if c.want == "" {
			if err != nil || string(data) != "a: 1\n" {
				t.Errorf("ReadFile(%s): got %q, %v; want the file", c.path, data, err)
			}
			continue
		}
		var tl *TooLargeError
		if err == nil || err.Error() != c.want || !errors.As(err, &tl) || exitcode.Of(err) != exitcode.Usage {
			t.Errorf("ReadFile(%s, %d): got %v (exit %d), want %q (exit 2)", c.path, c.limit, err, exitcode.Of(err), c.want)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "absent"), 10); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Errorf("an absent file: got %v, want the path error", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB", 1 << 30: "1 GiB", 3 << 10: "3 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
