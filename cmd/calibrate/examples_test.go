package main

import (
	"testing"

	"servesim/internal/testkit/clitest"
)

// TestHelpExamplesParse: every command line of the --help examples that
// calls this binary parses with its flags.
func TestHelpExamplesParse(t *testing.T) {
	// main dispatches `calibrate steps` before the app; here it is the
	// subcommand it stands for.
	cmd := command()
	cmd.Subcommands = append(cmd.Subcommands, stepsCommand())
	if n := clitest.CheckExamples(t, cmd); n < 3 {
		t.Errorf("checked %d example lines, want the help's every one", n)
	}
}
