package main

import (
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
