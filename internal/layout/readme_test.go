package layout

import (
	"bytes"
	"io/fs"
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

// freshClone copies the files git tracks, as the working tree has them,
// into a directory with nothing beside it (no ../shared, no bin/, no
// ignored files): what a fresh clone of this checkout holds. It returns
// the copy's root and the tracked paths (slash-separated).
func freshClone(t *testing.T) (string, map[string]bool) {
	t.Helper()
	out, err := exec.Command("git", "-C", "../..", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (git ls-files: %v): the fresh-clone test needs one", err)
	}
	root := filepath.Join(t.TempDir(), "servesim")
	tracked := map[string]bool{}
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join("../..", filepath.FromSlash(rel))
		st, err := os.Stat(src)
		if err != nil {
			continue // deleted in the working tree, not committed yet
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
		tracked[rel] = true
	}
	if !tracked["go.mod"] || !tracked["README.md"] {
		t.Fatalf("git ls-files listed %d files but not go.mod and README.md", len(tracked))
	}
	return root, tracked
}

// TestREADMEExamples runs every sh block of the README after the first (the
// first is `make demo` / `make test`, which CI runs itself) in a fresh
// clone with nothing beside it, with the binaries built into its bin/, so
// the README cannot drift from what the binaries accept nor lean on data
// outside the repository. Every file the examples write must be ignored by
// git. A block that calls GNU parallel is skipped when parallel is not
// installed, unless CI requires it ($SERVESIM_REQUIRE_PARALLEL).
func TestREADMEExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	root, tracked := freshClone(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlocks(string(readme))
	if len(blocks) < 2 || !strings.Contains(blocks[0], "make demo") || !strings.Contains(blocks[0], "make test") {
		t.Fatalf("the README must open with the make demo / make test block; found %d sh blocks", len(blocks))
	}
	_, noParallel := exec.LookPath("parallel")
	if noParallel != nil && os.Getenv("SERVESIM_REQUIRE_PARALLEL") != "" {
		t.Fatal("GNU parallel is required ($SERVESIM_REQUIRE_PARALLEL is set) but not installed")
	}
	build := exec.Command("go", "build", "-o", filepath.Join(root, "bin")+"/", "./cmd/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for i, b := range blocks[1:] {
		if noParallel != nil && strings.Contains(b, "parallel ") {
			t.Logf("README sh block %d skipped: GNU parallel is not installed", i+2)
			continue
		}
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", b)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("README sh block %d failed: %v\n%s\n--- output\n%s", i+2, err, b, out)
		}
	}
	want := []string{"chat.csv", "chat.yaml", "sim.json", "report.html", "rows.csv", "capacity.html"}
	if noParallel == nil {
		want = append(want, "sweep.html", "merged.txt")
	}
	for _, f := range want {
		if st, err := os.Stat(filepath.Join(root, f)); err != nil || st.Size() == 0 {
			t.Errorf("the README examples should have written %s: %v", f, err)
		}
	}
	checkIgnored(t, root, tracked)
}

// checkIgnored fails for every file under root that git does not track and
// the repository's .gitignore does not ignore.
func checkIgnored(t *testing.T, root string, tracked map[string]bool) {
	t.Helper()
	var written []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); !tracked[rel] {
			written = append(written, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) == 0 {
		return
	}
	cmd := exec.Command("git", "-C", "../..", "check-ignore", "--no-index", "--stdin")
	cmd.Stdin = strings.NewReader(strings.Join(written, "\n") + "\n")
	out, _ := cmd.Output() // exit 1 when none is ignored
	ignored := map[string]bool{}
	for _, l := range strings.Split(string(bytes.TrimSpace(out)), "\n") {
		ignored[l] = true
	}
	for _, w := range written {
		if !ignored[w] {
			t.Errorf("the README examples wrote %s, which git does not ignore (add it to .gitignore)", w)
		}
	}
}
