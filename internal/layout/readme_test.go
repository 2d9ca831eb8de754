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
// from what the binaries accept. The scratch directory sits where a
// checkout does, with ../shared (the real data) beside it; a block that
// reads ../shared is skipped when it is absent, and one that calls GNU
// parallel when parallel is not installed (unless CI requires it:
// $SERVESIM_REQUIRE_PARALLEL).
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
	dir := filepath.Join(t.TempDir(), "servesim")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shared, err := filepath.Abs("../../../shared")
	if err != nil {
		t.Fatal(err)
	}
	_, noShared := os.Stat(shared)
	if noShared == nil {
		if err := os.Symlink(shared, filepath.Join(dir, "..", "shared")); err != nil {
			t.Fatal(err)
		}
	}
	_, noParallel := exec.LookPath("parallel")
	if noParallel != nil && os.Getenv("SERVESIM_REQUIRE_PARALLEL") != "" {
		t.Fatal("GNU parallel is required ($SERVESIM_REQUIRE_PARALLEL is set) but not installed")
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin")+"/", "../../cmd/...")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for i, b := range blocks[1:] {
		if noShared != nil && strings.Contains(b, "../shared/") {
			t.Logf("README sh block %d skipped: it reads ../shared, absent here", i+2)
			continue
		}
		if noParallel != nil && strings.Contains(b, "parallel ") {
			t.Logf("README sh block %d skipped: GNU parallel is not installed", i+2)
			continue
		}
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", b)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("README sh block %d failed: %v\n%s\n--- output\n%s", i+2, err, b, out)
		}
	}
	want := []string{"chat.csv", "chat.yaml", "sim.json", "report.html", "rows.csv"}
	if noShared == nil {
		want = append(want, "capacity.html")
	}
	if noParallel == nil {
		want = append(want, "sweep.html", "merged.txt")
	}
	for _, f := range want {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("the README examples should have written %s: %v", f, err)
		}
	}
}
