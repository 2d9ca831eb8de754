package layout

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cliLeaves are the only packages of the module that internal/cli may
// import: it is plumbing (stdio and '-', exit codes, the app shell, help,
// logging, progress, completion, flag descriptions turned into flags), and
// the domain describes its own flags (flagspec) for it.
var cliLeaves = []string{
	module + "/internal/clip",     // log values cut short
	module + "/internal/exitcode", // exit codes
	module + "/internal/fanout",   // --shard, as a flag description
	module + "/internal/flagspec", // flag descriptions
	module + "/internal/outfile",  // '-' and output files
	module + "/internal/suggest",  // did-you-mean of an unknown flag
}

// TestCLIIsPlumbing: no non-test file of internal/cli imports a package
// of the module other than cliLeaves.
func TestCLIIsPlumbing(t *testing.T) {
	files, err := filepath.Glob("../cli/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in ../cli: %v", err)
	}
	fset := token.NewFileSet()
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module+"/") && !slices.Contains(cliLeaves, p) {
				t.Errorf("internal/cli/%s imports %s: cli is plumbing and imports only %v", name, p, cliLeaves)
			}
		}
	}
}

// maxCmdLines bounds a non-test file of cmd/: a command turns its flags
// into one typed config and calls one library function, so what grows
// past this belongs in a package another command or a test can call.
const maxCmdLines = 300

// TestCmdFilesAreShort: every non-test .go file under cmd/ has at most
// maxCmdLines lines.
func TestCmdFilesAreShort(t *testing.T) {
	checked := 0
	err := filepath.WalkDir("../../cmd", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if n := strings.Count(string(data), "\n"); n > maxCmdLines {
			t.Errorf("%s has %d lines, want at most %d", path, n, maxCmdLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no file under cmd/ was checked")
	}
}
