package tracev2

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports: tracev2 is a leaf that imports no other internal package
// (but leaves: outfile, how every output file is written, jsonscan, the
// JSON scanner, clip, how a message is cut short, strictyaml, whose
// words for a YAML node's kind the header errors share, with its own leaf
// suggest, infile, the bound on a sidecar read whole, and exitcode, the
// exit code of a bad output prefix) and none of the CLI-only libraries.
func TestImports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps gave only %d packages: %q", len(deps), deps)
	}
	for _, d := range deps {
		switch {
		case d == "servesim/internal/tracev2", d == "servesim/internal/outfile", d == "servesim/internal/jsonscan", d == "servesim/internal/clip",
			d == "servesim/internal/strictyaml", d == "servesim/internal/suggest", d == "servesim/internal/infile", d == "servesim/internal/exitcode":
		case strings.HasPrefix(d, "servesim/"):
			t.Errorf("tracev2 depends on %s; it must import no other package of the module", d)
		case strings.Contains(d, "urfave/cli"), strings.Contains(d, "progressbar"):
			t.Errorf("tracev2 depends on %s; only cmd/* and internal/cli may", d)
		}
	}
}
