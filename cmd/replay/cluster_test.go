package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/exitcode"
)

// TestDecisionsParity: run and replay of its trace on a four-instance
// weighted cluster write byte-identical routing decision logs, one line
// per request.
func TestDecisionsParity(t *testing.T) {
	dir := t.TempDir()
	dep := []string{"--num-instances", "4", "--routing-policy", "weighted", "--trace-level", "decisions"}
	prefix := filepath.Join(dir, "gen")
	execRun(t, append([]string{"--workload", "chatbot", "--rate", "60", "--num-requests", "200", "--trace-output", prefix,
		"--decisions-out", filepath.Join(dir, "run.jsonl")}, dep...)...)
	mustReplay(t, nil, append([]string{prefix + ".csv", "--results-path", filepath.Join(dir, "sim.json"),
		"--decisions-out", filepath.Join(dir, "replay.jsonl")}, dep...)...)
	a, err := os.ReadFile(filepath.Join(dir, "run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "replay.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(a, []byte("\n")); n != 200 || !bytes.Equal(a, b) {
		t.Errorf("run wrote %d decisions; replay's log equal: %v", n, bytes.Equal(a, b))
	}
}

// TestClusterUsageErrors: inconsistent cluster flags exit 2 before
// anything is written.
func TestClusterUsageErrors(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "gen")
	execRun(t, "--workload", "chatbot", "--rate", "20", "--num-requests", "20", "--trace-output", prefix)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--decisions-out", filepath.Join(dir, "d.jsonl")}, "needs --trace-level decisions"},
		{[]string{"--trace-level", "decisions"}, "needs --decisions-out"},
		{[]string{"--trace-level", "all"}, `--trace-level "all"`},
		{[]string{"--num-instances", "2", "--routing-policy", "closest"}, `routing-policy "closest"`},
		{[]string{"--num-instances", "3", "--prefill-instances", "1", "--decode-instances", "1"}, "num-instances 3 must equal"},
	} {
		r := replayIn(nil, append([]string{prefix + ".csv", "--results-path", filepath.Join(dir, "x.json"), "--quiet"}, tc.args...)...)
		if exitcode.Of(r.err) != 2 || !strings.Contains(r.err.Error(), tc.want) {
			t.Errorf("replay %v: exit %d, err %v; want exit 2 mentioning %q", tc.args, exitcode.Of(r.err), r.err, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "x.json")); err == nil {
			t.Errorf("replay %v left a results file", tc.args)
		}
	}
}
