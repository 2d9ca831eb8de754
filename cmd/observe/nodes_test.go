package main

import (
	"path/filepath"
	"testing"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/testkit/clitest"
)

// TestOutputsIntoDevices: every file observe writes, pointed at a FIFO or a
// character device, is written into it; the node is still there after.
func TestOutputsIntoDevices(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	clitest.WithNodes(t, []string{"cap.yaml", "cap.csv", "itl.csv", "metrics.csv"}, func(t *testing.T, dir string, nodes []*clitest.Node) {
		o := observeIn(testCtx(t), baseArgs(srv, "--num-requests", "4", "--rate", "200",
			"--trace-output", filepath.Join(dir, "cap"), "--record-itl", "--itl-output", nodes[2].Path,
			"--scrape-metrics", "--metrics-output", nodes[3].Path)...)
		if o.Err != nil {
			t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
		}
	})
}
