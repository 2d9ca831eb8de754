package shareddata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// ModuleRoot walks up from dir to the first directory holding a go.mod and
// returns it.
func ModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("shareddata: module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("shareddata: module root: no go.mod above the test directory")
		}
		dir = parent
	}
}

// Roots are the folders Find looks in, in order, relative to the module
// root: the repository's own samples, then the shared data beside it.
func Roots() []string {
	return []string{"testdata", filepath.Join("..", "shared", "data")}
}

// Find returns the path of rel (slash-separated, relative to a data root) as
// seen from dir: under the module's testdata/ when it is there, else under
// ../shared/data; an error when there is no module root above dir or
// neither root holds rel.
func Find(dir, rel string) (string, error) {
	root, err := ModuleRoot(dir)
	if err != nil {
		return "", err
	}
	var first error
	for _, r := range Roots() {
		p := filepath.Join(root, r, filepath.FromSlash(rel))
		_, err := os.Stat(p)
		if err == nil {
			return p, nil
		}
		if first == nil {
			first = err
		}
	}
	return "", fmt.Errorf("shareddata: real data absent (neither testdata/ in the repository nor ../shared/data beside it holds %s): %w", rel, first)
}

// Path returns the path of rel (slash-separated, relative to a data root;
// see Find) as seen from the test's working directory (its
// package directory), or skips tb when it is absent.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	wd, err := os.Getwd()
	if err != nil {
		tb.Fatalf("shareddata: %v", err)
		return ""
	}
	p, err := Find(wd, rel)
	if err != nil {
		tb.Skipf("%v: skipping", err)
		return ""
	}
	return p
}
