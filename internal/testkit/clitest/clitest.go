package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"servesim/internal/cli"
)

// Result is one in-process run of a command.
type Result struct {
	Stdout, Stderr string
	Err            error // what the command's run function returned
	Code           int   // the exit code main would give for Err
}

// Run runs a command's entry point in-process with prog as its program name,
// args after it and stdin (nil for empty), as cli.Main does: the error is
// printed on stderr prefixed by prog, and Code is the exit code for it.
func Run(ctx context.Context, prog string, run cli.RunFunc, stdin io.Reader, args ...string) Result {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb Buffer
	err := run(ctx, append([]string{prog}, args...), stdin, &out, &errb)
	code := cli.Report(prog, err, &errb)
	return Result{Stdout: out.String(), Stderr: errb.String(), Err: err, Code: code}
}

// Buffer is a bytes.Buffer safe for concurrent writers and readers: a
// command may write from several goroutines while a test reads.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Golden compares got with testdata/<name>. With update it first rewrites
// the file (creating testdata/ when needed), so the comparison passes.
func Golden(tb testing.TB, update bool, name, got string) {
	tb.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		tb.Errorf("%s differs from the golden file (rerun with -update if intended):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Binaries builds servesim/cmd/<name> at most once per test process, into
// one temporary directory. The zero value is ready to use; call Remove from
// TestMain after the tests have run.
type Binaries struct {
	mu    sync.Mutex
	dir   string
	built map[string]error
}

// Path builds the command name if it has not been built yet and returns the
// binary's path, failing tb when the build fails.
func (b *Binaries) Path(tb testing.TB, name string) string {
	tb.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "servesim-test-bin")
		if err != nil {
			tb.Fatal(err)
		}
		b.dir, b.built = dir, map[string]error{}
	}
	path := filepath.Join(b.dir, name)
	err, done := b.built[name]
	if !done {
		out, berr := exec.Command("go", "build", "-o", path, "servesim/cmd/"+name).CombinedOutput()
		if berr != nil {
			err = fmt.Errorf("go build servesim/cmd/%s: %v\n%s", name, berr, out)
		}
		b.built[name] = err
	}
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// Remove deletes the binaries built so far.
func (b *Binaries) Remove() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		os.RemoveAll(b.dir)
		b.dir, b.built = "", nil
	}
}

// TraceEvent is one event of a timeline written by --timeline (Chrome
// trace-event format), with the fields the commands' tests read.
type TraceEvent struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Cat  string         `json:"cat"`
	Pid  int            `json:"pid"`
	Args map[string]any `json:"args"`
}

// ReadTimeline parses the timeline at path, failing the test if it cannot.
func ReadTimeline(tb testing.TB, path string) []TraceEvent {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var f struct {
		TraceEvents []TraceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		tb.Fatalf("timeline %s: %v", path, err)
	}
	return f.TraceEvents
}
