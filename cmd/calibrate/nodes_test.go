package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/testkit/clitest"
)

// TestOutputsIntoDevices: every file calibrate and calibrate fit write,
// pointed at a FIFO or a character device, is written into it; the node is
// still there after.
func TestOutputsIntoDevices(t *testing.T) {
	clitest.WithNodes(t, []string{"r.json", "r.md", "r.html", "fit.yaml"}, func(t *testing.T, _ string, nodes []*clitest.Node) {
		if _, errs, code := runCmd(t, "", realCSV, simJSON, "--report", nodes[0].Path, "--markdown", nodes[1].Path,
			"--html", nodes[2].Path, "--quiet"); code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if _, errs, code := runCmd(t, "", "fit", realCSV, "--max-iterations", "2", "-o", nodes[3].Path, "--quiet"); code != 0 {
			t.Fatalf("fit: exit %d: %s", code, errs)
		}
	})
}

// TestFailedOpenLeavesNoTemporary: when one output cannot be created, the
// command fails before anything is written (exit 2, the directory does not
// exist), and leaves no temporary file behind.
func TestFailedOpenLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	_, errs, code := runCmd(t, "", realCSV, simJSON, "--report", filepath.Join(dir, "r.json"),
		"--html", filepath.Join(dir, "no", "such", "r.html"))
	if code != 2 || !strings.Contains(errs, "r.html") {
		t.Fatalf("exit %d, stderr %q: want 2 naming r.html", code, errs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
