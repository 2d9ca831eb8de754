package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"servesim/internal/testkit/clitest"
)

// TestHelpExamplesParse: every command line of the --help examples that
// calls this binary parses with its flags.
func TestHelpExamplesParse(t *testing.T) {
	if n := clitest.CheckExamples(t, command()); n < 3 {
		t.Errorf("checked %d example lines, want the help's every one", n)
	}
}

// TestHelpExamplesPassValidation: every observe example of --help gets
// past all of observe's checks of its input (exit 2) and stops only at the
// server, which is not there (exit 1). The run lines of the examples run
// first, for the files they make (the sweep's overlay). An example playing
// or merging trace files the examples do not make is left out.
func TestHelpExamplesPassValidation(t *testing.T) {
	if testing.Short() {
		t.Skip("builds run")
	}
	runBin := bins.Path(t, "run") // built from the package's folder
	t.Chdir(t.TempDir())
	for _, words := range clitest.ExamplesOf(command(), "run") {
		cmd := exec.Command(runBin, append(words[1:], "--quiet")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(words, " "), err, out)
		}
	}
	checked := 0
	for _, words := range clitest.Examples(command()) {
		if slices.Contains(words, "--trace") || slices.Contains(words, "--merge") {
			continue // plays or merges files the examples do not make
		}
		args := append([]string(nil), words[1:]...)
		for i := range args {
			if i > 0 && args[i-1] == "--url" {
				args[i] = "http://127.0.0.1:1" // nothing listens on port 1
			}
		}
		r := observeIn(testCtx(t), append(args, "--quiet")...)
		checked++
		if r.Code != 1 || !strings.Contains(r.Stderr, "127.0.0.1:1") {
			t.Errorf("observe %s: exit %d, want 1 at the absent server:\n%s", strings.Join(args, " "), r.Code, r.Stderr)
		}
	}
	if checked < 5 {
		t.Errorf("checked %d examples, want every one", checked)
	}
}
