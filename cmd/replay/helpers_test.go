package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2"
)

// bins holds the commands built by this test process (test-only state,
// removed by TestMain): cmd/run is a main package, so its run function
// cannot be imported from here.
var bins clitest.Binaries

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Remove()
	os.Exit(code)
}

// execRun runs the run binary and returns its stdout.
func execRun(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bins.Path(t, "run"), append(args, "--quiet")...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("run %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

// result is one in-process replay.
type result struct {
	stdout, stderr string
	err            error
}

func replayIn(stdin io.Reader, args ...string) result {
	r := clitest.Run(context.Background(), "replay", run, stdin, args...)
	return result{r.Stdout, r.Stderr, r.Err}
}

// mustReplay runs replay in-process and fails the test on an error.
func mustReplay(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	r := replayIn(stdin, append(args, "--quiet")...)
	if r.err != nil {
		t.Fatalf("replay %s: %v (exit %d)\nstderr:\n%s", strings.Join(args, " "), r.err, exitcode.Of(r.err), r.stderr)
	}
	return r
}

func readSimResults(t *testing.T, path string) map[int64]tracev2.SimResult {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := tracev2.ReadSimResults(f, path)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[int64]tracev2.SimResult, len(rs))
	for _, r := range rs {
		if _, dup := m[r.RequestID]; dup {
			t.Fatalf("%s: request %d twice", path, r.RequestID)
		}
		m[r.RequestID] = r
	}
	return m
}

// requestLine mirrors one line of run's --requests-out.
type requestLine struct {
	Status string `json:"status"`
	tracev2.SimResult
}

// readCompleted reads run's --requests-out and keeps the completed requests.
func readCompleted(t *testing.T, path string) (map[int64]tracev2.SimResult, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[int64]tracev2.SimResult{}
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l requestLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		n++
		if l.Status == "ok" {
			m[l.RequestID] = l.SimResult
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return m, n
}

// summaryOf decodes a summary JSON into a generic map.
func summaryOf(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("summary: %v\n%s", err, b)
	}
	return m
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
