package report

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports enforces the layering of docs/ARCHITECTURE.md: report knows no simulator, no load generator,
// and no command-line libraries.
func TestImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Skipf("go list unavailable: %v: %s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"servesim/internal/des", "servesim/internal/httpload", "servesim/internal/cli",
			"github.com/urfave/cli", "github.com/schollz/progressbar"} {
			if dep == banned || strings.HasPrefix(dep, banned+"/") {
				t.Errorf("report depends on %s", dep)
			}
		}
	}
	if !strings.Contains(string(out), "github.com/montanaflynn/stats") {
		t.Error("report must compute its statistics through montanaflynn/stats")
	}
}
