package main

import (
	"path/filepath"
	"testing"

	"servesim/internal/testkit/clitest"
)

// TestOutputsIntoDevices: every file replay writes, pointed at a FIFO or a
// character device, is written into it; the node is still there after.
func TestOutputsIntoDevices(t *testing.T) {
	rows := ""
	for i, at := range []string{"0", "50000", "90000", "160000"} {
		rows += string(rune('0'+i)) + ",c,,,,0,,0,true,40,12,0,0,0,0,0,,0,0," + at + "," + at + ",0,0,0,ok,,\n"
	}
	names := []string{"results.json", "metrics.json", "timeline.json", "requests.jsonl", "decisions.jsonl", "rep.yaml", "rep.csv"}
	clitest.WithNodes(t, names, func(t *testing.T, dir string, nodes []*clitest.Node) {
		trace := writeFile(t, filepath.Join(dir, "in.csv"), coreColumns+rows)
		writeFile(t, filepath.Join(dir, "in.yaml"), genHeader)
		mustReplay(t, nil, trace, "--num-instances", "2",
			"--results-path", nodes[0].Path, "--metrics-out", nodes[1].Path,
			"--timeline", nodes[2].Path, "--requests-out", nodes[3].Path,
			"--trace-level", "decisions", "--decisions-out", nodes[4].Path,
			"--trace-output", filepath.Join(dir, "rep"), "--trace-ext")
	})
}
