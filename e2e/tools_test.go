package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// setup is what `make e2e` hands the test through the environment.
type setup struct {
	ollama string // the server binary (e2e/build-ollama.sh)
	bin    string // folder of observe, replay, calibrate, run
	out    string // folder the reports are written to, kept after the test
}

// loadSetup skips the test unless SERVESIM_E2E=1 and checks the rest.
func loadSetup(t *testing.T) setup {
	t.Helper()
	if os.Getenv("SERVESIM_E2E") != "1" {
		t.Skip("end-to-end loop against a real Ollama server: run `make e2e` (or set SERVESIM_E2E=1 and SERVESIM_OLLAMA)")
	}
	s := setup{ollama: os.Getenv("SERVESIM_OLLAMA"), bin: os.Getenv("SERVESIM_BIN"), out: os.Getenv("SERVESIM_E2E_OUT")}
	if s.ollama == "" {
		t.Fatal("SERVESIM_OLLAMA is not set: build the server with e2e/build-ollama.sh, which prints its path")
	}
	if _, err := os.Stat(s.ollama); err != nil {
		t.Fatalf("SERVESIM_OLLAMA: %v", err)
	}
	if s.bin == "" {
		root, err := moduleRoot()
		if err != nil {
			t.Fatal(err)
		}
		s.bin = filepath.Join(root, "bin")
	}
	for _, name := range []string{"observe", "replay", "calibrate", "run"} {
		if _, err := os.Stat(filepath.Join(s.bin, name)); err != nil {
			t.Fatalf("%s: %v (run `make build` first)", name, err)
		}
	}
	if s.out == "" {
		s.out = t.TempDir()
	}
	if err := os.MkdirAll(s.out, 0o755); err != nil {
		t.Fatal(err)
	}
	return s
}

// moduleRoot walks up from the working directory to the folder of go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// tool runs one of the suite's binaries with a time limit. Its stdout is
// returned; its stderr goes to logName in the output folder (and, on
// failure, into the test log).
func (s setup) tool(t *testing.T, limit time.Duration, logName, name string, args ...string) (stdout []byte, exit int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		boost(cmd.Process.Pid)
		err = cmd.Wait()
	}
	if werr := os.WriteFile(filepath.Join(s.out, logName), errb.Bytes(), 0o644); werr != nil {
		t.Errorf("write %s: %v", logName, werr)
	}
	exit = cmd.ProcessState.ExitCode()
	if ctx.Err() != nil {
		t.Fatalf("%s did not finish within %v: %s %s\n%s", name, limit, name, strings.Join(args, " "), tail(errb.String(), 2000))
	}
	if err != nil && exit < 0 {
		t.Fatalf("%s: %v", name, err)
	}
	t.Logf("%s %s → exit %d in %.1f s", name, strings.Join(args, " "), exit, time.Since(start).Seconds())
	return out.Bytes(), exit
}

// mustTool is tool that fails the test on a non-zero exit.
func (s setup) mustTool(t *testing.T, limit time.Duration, logName, name string, args ...string) []byte {
	t.Helper()
	out, exit := s.tool(t, limit, logName, name, args...)
	if exit != 0 {
		b, _ := os.ReadFile(filepath.Join(s.out, logName))
		t.Fatalf("%s exited %d:\n%s", name, exit, tail(string(b), 3000))
	}
	return out
}

// tail is the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("…%s", s[len(s)-n:])
}
