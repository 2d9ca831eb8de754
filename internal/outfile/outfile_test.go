package outfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// leftovers lists the temporary files left in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			tmp = append(tmp, e.Name())
		}
	}
	return tmp
}

func TestRegularFileIsReplacedOnlyOnCommit(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Fatalf("before commit %s holds %q, want %q", p, got, "old")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(got) != "new" || fi.Mode().Perm() != 0o600 {
		t.Errorf("after commit: %q mode %v, want %q mode -rw-------", got, fi.Mode().Perm(), "new")
	}
	if tmp := leftovers(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.json")
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Abort()
	f.Abort()
	if err := f.Commit(); err != nil {
		t.Errorf("commit after abort: %v", err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s exists after abort (err %v)", p, err)
	}
	if tmp := leftovers(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestFailedCommitLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	f, err := Create(p)
	if err != nil {
		t.Fatal(err)
	}
	// A directory made in the meantime under the name: rename must fail.
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("commit over a non-empty directory succeeded")
	}
	if tmp := leftovers(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestSymlinkIsFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.json", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a link (%v, %v)", link, fi.Mode(), err)
	}
	if got, _ := os.ReadFile(target); string(got) != "new" {
		t.Errorf("target holds %q, want %q", got, "new")
	}
}

func TestFIFOIsWrittenInPlace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		r, err := os.Open(p)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(r)
		r.Close()
		got <- string(b)
	}()
	if err := WriteFile(p, []byte("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Errorf("reader got %q", s)
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v %v", p, fi.Mode(), err)
	}
	if tmp := leftovers(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestCharDeviceIsWrittenInPlace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod needs root")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "null")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil { // 1:3, /dev/null
		t.Skipf("mknod: %v", err)
	}
	for _, abort := range []bool{false, true} {
		f, err := Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("discarded")); err != nil {
			t.Fatal(err)
		}
		if abort {
			f.Abort()
		} else if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("abort=%v: %s is no longer a character device: %v %v", abort, p, fi.Mode(), err)
		}
	}
	if tmp := leftovers(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestDescriptorLinkIsWrittenInPlace(t *testing.T) {
	// /dev/stdout is a link to /proc/self/fd/1; here a descriptor of our
	// own stands for it, pointing at a regular file that must keep its name.
	dir := t.TempDir()
	p := filepath.Join(dir, "captured")
	w, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Write([]byte("before;"))
	link := filepath.Join(dir, "stdout")
	if err := os.Symlink("/proc/self/fd/"+strconv.Itoa(int(w.Fd())), link); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	if err := WriteFile(link, []byte("after")); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "before;after" {
		t.Errorf("the descriptor's file holds %q, want %q", got, "before;after")
	}
	if tmp := leftovers(t, dir); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestCreateInMissingDirectoryFails(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "no", "such", "out.json"))
	if err == nil || !strings.Contains(err.Error(), "out.json") {
		t.Errorf("err = %v, want one naming out.json", err)
	}
}
