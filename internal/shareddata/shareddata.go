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

// Find returns the path of rel (slash-separated, relative to shared/data) as
// seen from dir, or an error when there is no module root above dir or
// nothing at that path.
func Find(dir, rel string) (string, error) {
	root, err := ModuleRoot(dir)
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "..", "shared", "data", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("shareddata: real data absent (../shared/data beside the repository holds the real traces and runs): %w", err)
	}
	return p, nil
}

// Path returns the path of rel (slash-separated, relative to shared/data;
// "" for the folder itself) as seen from the test's working directory (its
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
