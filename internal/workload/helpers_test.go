package workload

import (
	"os"
	"path/filepath"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func mustResolve(t testing.TB, o Options) *Workload {
	t.Helper()
	w, err := Resolve(o)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return w
}

// mustDecode decodes a spec given as text, named spec.yaml.
func mustDecode(t testing.TB, text string) *Workload {
	t.Helper()
	w, err := Resolve(Options{SpecPath: "spec.yaml", SpecData: []byte(text)})
	if err != nil {
		t.Fatalf("spec: %v", err)
	}
	return w
}

// drain returns every pre-generated request of a fresh source.
func drain(w *Workload) []*Request {
	var out []*Request
	src := w.NewSource()
	for r, ok := src.Next(); ok; r, ok = src.Next() {
		out = append(out, r)
	}
	return out
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
