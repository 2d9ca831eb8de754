package main

import (
	"testing"

	"servesim/internal/cli/clitest"
)

// TestHelpStatesOneDefault: no flag's help states two defaults.
func TestHelpStatesOneDefault(t *testing.T) { clitest.CheckHelp(t, command()) }
