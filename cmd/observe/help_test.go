package main

import (
	"bytes"
	"regexp"
	"testing"

	"servesim/internal/httpload"
	"servesim/internal/testkit/clitest"
)

// TestHelpStatesOneDefault: no flag's help states two defaults.
func TestHelpStatesOneDefault(t *testing.T) { clitest.CheckHelp(t, command()) }

// TestCompletionScripts: the bash, zsh and fish scripts name every flag.
func TestCompletionScripts(t *testing.T) { clitest.CheckCompletion(t, command()) }

// TestSummaryNotStreamed: responses sent whole have no per-token timing;
// the summary says TPOT and ITL were not measured instead of 0.00 ms.
func TestSummaryNotStreamed(t *testing.T) {
	tal := newTally(goodput{})
	for id := range int64(3) {
		send, done := 1000+id*500, 300_000+id*1000
		r := httpload.Result{Job: httpload.Job{ID: id, IntendedUS: send}, SendUS: send, FirstChunkUS: done,
			FirstTokenUS: done, LastChunkUS: done, DoneUS: done, NumChunks: 1, TextChunks: 1,
			PromptTokens: 100, CompletionTokens: 50, HasUsage: true, Status: httpload.StatusOK}
		tal.add(&r)
	}
	var b bytes.Buffer
	if err := tal.write(&b, summaryInfo{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, m := range []string{"TPOT", "ITL"} {
		for _, s := range []string{"Mean", "Median", "P99"} {
			if !regexp.MustCompile(`(?m)^` + s + ` ` + m + ` \(ms\):\s+not measured$`).MatchString(out) {
				t.Errorf("%s %s is not said to be not measured:\n%s", s, m, out)
			}
		}
	}
	if !regexp.MustCompile(`(?m)^Mean E2EL \(ms\):\s+29[0-9]\.\d\d$`).MatchString(out) {
		t.Errorf("E2EL must still be measured:\n%s", out)
	}
}
