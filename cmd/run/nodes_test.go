package main

import (
	"path/filepath"
	"testing"

	"servesim/internal/testkit/clitest"
)

// TestOutputsIntoDevices: every file run writes, pointed at a FIFO or a
// character device, is written into it; the node is still there after.
func TestOutputsIntoDevices(t *testing.T) {
	names := []string{"timeline.json", "requests.jsonl", "decisions.jsonl", "metrics.json", "gen.yaml", "gen.csv", "rows.csv", "sweep.html"}
	clitest.WithNodes(t, names, func(t *testing.T, dir string, nodes []*clitest.Node) {
		_, errs, code := runCmd(t, "", "--workload", "chatbot", "--rate", "10", "--num-requests", "20", "--num-instances", "2",
			"--timeline", nodes[0].Path, "--requests-out", nodes[1].Path,
			"--trace-level", "decisions", "--decisions-out", nodes[2].Path, "--metrics-out", nodes[3].Path,
			"--trace-output", filepath.Join(dir, "gen"), "--quiet")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		_, errs, code = runCmd(t, "", "sweep", "--workload", "chatbot", "--rate", "10", "--num-requests", "20",
			"--grid", "num_instances=1,2", "--format", "csv", "-o", nodes[6].Path, "--html", nodes[7].Path, "--quiet")
		if code != 0 {
			t.Fatalf("sweep: exit %d: %s", code, errs)
		}
	})
}
