package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2"
)

// TestInterruptedReplay: a replay interrupted before its first injection
// exits 130 with the (empty) summary on stderr, nothing on stdout, its
// trace marked interrupted and no results file that would look complete.
func TestInterruptedReplay(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "in.yaml"), genHeader)
	trace := writeFile(t, filepath.Join(dir, "in.csv"), coreColumns+
		"0,c,,,,0,,0,false,40,12,0,0,0,0,0,,0,0,80000,80000,0,0,0,ok,,\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := clitest.Run(ctx, "replay", run, nil, trace, "--results-path", filepath.Join(dir, "sim.json"),
		"--trace-output", filepath.Join(dir, "rep"), "--trace-ext", "--quiet")
	if r.Code != exitcode.Interrupted || r.Stdout != "" {
		t.Fatalf("exit %d, stdout %q; want 130 and nothing\n%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"interrupted before the first request was injected", "requests   injected 0",
		"replay: interrupted after 0 requests injected (0 completed); of the outputs only a trace is kept, marked interrupted: context canceled"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "sim.json")); !os.IsNotExist(err) {
		t.Errorf("sim.json was written (%v)", err)
	}
	h, err := tracev2.ReadHeaderFile(filepath.Join(dir, "rep.yaml"), tracev2.Options{})
	if err != nil || h.XExt == nil || h.XExt.Interrupted == nil || !*h.XExt.Interrupted {
		t.Errorf("rep.yaml: %+v, %v; want x_ext.interrupted: true", h, err)
	}
}
