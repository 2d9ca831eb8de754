package layout

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shBlocks returns the ```sh blocks of a Markdown file, in order.
func shBlocks(text string) []string {
	var blocks []string
	var cur []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```sh":
			in, cur = true, nil
		case in && strings.TrimSpace(line) == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n"))
		case in:
			cur = append(cur, line)
		}
	}
	return blocks
}

// TestREADMEExamples runs every sh block of the README after the first (the
// first is `make demo` / `make test`, which CI runs itself) with freshly
// built binaries in bin/ of a scratch directory, so the README cannot drift
// from what the binaries accept.
func TestREADMEExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlocks(string(readme))
	if len(blocks) < 2 || !strings.Contains(blocks[0], "make demo") || !strings.Contains(blocks[0], "make test") {
		t.Fatalf("the README must open with the make demo / make test block; found %d sh blocks", len(blocks))
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin")+"/", "../../cmd/...")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for i, b := range blocks[1:] {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", b)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("README sh block %d failed: %v\n%s\n--- output\n%s", i+2, err, b, out)
		}
	}
	for _, f := range []string{"chat.csv", "chat.yaml", "sim.json", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("the README examples should have written %s: %v", f, err)
		}
	}
}
