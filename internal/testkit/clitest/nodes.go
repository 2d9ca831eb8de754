package clitest

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Node is a FIFO or a character device made in a test's directory, to point
// an output flag at: an output must be written into it, never renamed over
// it.
type Node struct {
	Path string
	kind fs.FileMode // its fs.FileMode.Type()
}

// FIFO makes a named pipe at dir/name with a reader that drains it until
// the test ends. The reader holds the pipe open for reading and writing, so
// a writer's open never waits and the reader never sees the end of file.
func FIFO(tb testing.TB, dir, name string) *Node {
	tb.Helper()
	n := &Node{Path: filepath.Join(dir, name), kind: fs.ModeNamedPipe}
	if err := syscall.Mkfifo(n.Path, 0o600); err != nil {
		tb.Fatalf("mkfifo: %v", err)
	}
	f, err := os.OpenFile(n.Path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatalf("open %s: %v", n.Path, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(io.Discard, f) // returns when Close below interrupts it
	}()
	tb.Cleanup(func() {
		f.Close()
		<-done
	})
	return n
}

// NullDevice makes a character device like /dev/null (1:3) at dir/name. It
// needs root: the test is skipped otherwise.
func NullDevice(tb testing.TB, dir, name string) *Node {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("mknod of a character device needs root")
	}
	n := &Node{Path: filepath.Join(dir, name), kind: fs.ModeDevice | fs.ModeCharDevice}
	if err := syscall.Mknod(n.Path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		if errors.Is(err, syscall.EPERM) {
			tb.Skipf("mknod: %v", err) // root without CAP_MKNOD, as in some containers
		}
		tb.Fatalf("mknod: %v", err)
	}
	return n
}

// Check fails tb if the node is no longer what it was made as, or if a
// temporary file was left beside it.
func (n *Node) Check(tb testing.TB) {
	tb.Helper()
	fi, err := os.Lstat(n.Path)
	if err != nil {
		tb.Errorf("%s: %v", n.Path, err)
		return
	}
	if fi.Mode().Type() != n.kind {
		tb.Errorf("%s is now %v, want %v", n.Path, fi.Mode().Type(), n.kind)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(n.Path), "."+filepath.Base(n.Path)+".tmp*"))
	if len(left) > 0 {
		tb.Errorf("temporary files left: %v", left)
	}
}

// Nodes makes one node of kind ("fifo" or "chardev") per name in dir.
func Nodes(tb testing.TB, kind, dir string, names ...string) []*Node {
	tb.Helper()
	mk := FIFO
	if kind == "chardev" {
		mk = NullDevice
	}
	nodes := make([]*Node, 0, len(names))
	for _, name := range names {
		nodes = append(nodes, mk(tb, dir, name))
	}
	return nodes
}

// WithNodes runs fn once with a FIFO and once with a character device
// (skipped without root) made at dir/name for each name, in a fresh temp
// dir, and then checks every node is still what it was made as.
func WithNodes(t *testing.T, names []string, fn func(t *testing.T, dir string, nodes []*Node)) {
	t.Helper()
	for _, kind := range []string{"fifo", "chardev"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			nodes := Nodes(t, kind, dir, names...)
			fn(t, dir, nodes)
			for _, n := range nodes {
				n.Check(t)
			}
		})
	}
}
