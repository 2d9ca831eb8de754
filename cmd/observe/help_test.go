package main

import (
	"testing"

	"servesim/internal/testkit/clitest"
)

// TestHelpStatesOneDefault: no flag's help states two defaults.
func TestHelpStatesOneDefault(t *testing.T) { clitest.CheckHelp(t, command()) }

// TestCompletionScripts: the bash, zsh and fish scripts name every flag.
func TestCompletionScripts(t *testing.T) { clitest.CheckCompletion(t, command()) }
