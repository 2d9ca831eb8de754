package workload

import (
	"go/build"
	"strings"
	"testing"
)

// The package is a shared language: it may import only the standard
// library, yaml.v3, the domain-free leaves strictyaml, suggest, infile
// (the bound on a spec read whole) and flagspec (its flags' descriptions),
// and tracev2, the trace format whose
// header states the client a workload describes (no simulator, HTTP
// client, CLI or progress code below the engines).
func TestImportsStayLow(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") && imp != "gopkg.in/yaml.v3" {
			t.Errorf("imports %s: only the standard library and gopkg.in/yaml.v3 are allowed", imp)
		}
		leaf := imp == "servesim/internal/strictyaml" || imp == "servesim/internal/suggest" ||
			imp == "servesim/internal/flagspec" || imp == "servesim/internal/tracev2" || imp == "servesim/internal/infile"
		if (strings.HasPrefix(imp, "servesim/") && !leaf) || imp == "net/http" || imp == "os/exec" {
			t.Errorf("imports %s: workload must not depend on the project's engines or on HTTP", imp)
		}
	}
}
