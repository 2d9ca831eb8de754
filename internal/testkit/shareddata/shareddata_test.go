package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree builds <tmp>/repo/go.mod, <tmp>/repo/pkg/sub,
// <tmp>/repo/testdata/runs/{a,c}.csv and <tmp>/shared/data/runs/{a,b}.csv,
// and returns <tmp>.
func tree(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	for _, d := range []string{"repo/pkg/sub", "repo/testdata/runs", "shared/data/runs"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"repo/go.mod", "repo/testdata/runs/a.csv", "repo/testdata/runs/c.csv",
		"shared/data/runs/a.csv", "shared/data/runs/b.csv"} {
		if err := os.WriteFile(filepath.Join(tmp, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tmp
}

func TestFind(t *testing.T) {
	tmp := tree(t)
	tests := []struct {
		name, dir, rel string
		want           string // relative to tmp; "" means an error
		wantErr        string
	}{
		{"the repository's sample comes first", "repo/pkg/sub", "runs/a.csv", "repo/testdata/runs/a.csv", ""},
		{"a sample only the repository holds", "repo/pkg", "runs/c.csv", "repo/testdata/runs/c.csv", ""},
		{"then the shared data beside it", "repo/pkg/sub", "runs/b.csv", "shared/data/runs/b.csv", ""},
		{"folder from the module root", "repo", "runs", "repo/testdata/runs", ""},
		{"absent file", "repo/pkg", "runs/d.csv", "", "real data absent"},
		{"no go.mod above", "shared", "runs/a.csv", "", "no go.mod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Find(filepath.Join(tmp, tt.dir), tt.rel)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Find = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(tmp, tt.want)
			if filepath.Clean(got) != want {
				t.Errorf("Find = %q, want %q", got, want)
			}
		})
	}
}

// TestFindWithoutSharedData is a fresh clone with nothing beside it: the
// repository's samples are found, anything else is absent.
func TestFindWithoutSharedData(t *testing.T) {
	tmp := tree(t)
	if err := os.RemoveAll(filepath.Join(tmp, "shared")); err != nil {
		t.Fatal(err)
	}
	got, err := Find(filepath.Join(tmp, "repo", "pkg"), "runs/a.csv")
	if want := filepath.Join(tmp, "repo", "testdata", "runs", "a.csv"); err != nil || got != want {
		t.Errorf("Find = %q, %v; want %q", got, err, want)
	}
	if _, err := Find(filepath.Join(tmp, "repo"), "runs/b.csv"); err == nil || !strings.Contains(err.Error(), "runs/b.csv") {
		t.Errorf("Find of a file only the shared data held = %v, want an error naming it", err)
	}
}

// recordingTB records a skip instead of ending the goroutine.
type recordingTB struct {
	testing.TB
	skipped string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
}

func TestPathSkipsWhenAbsent(t *testing.T) {
	tb := &recordingTB{TB: t}
	got := Path(tb, "no/such/folder/anywhere")
	if got != "" {
		t.Errorf("Path = %q, want \"\" after a skip", got)
	}
	for _, want := range []string{"real data absent", "no/such/folder/anywhere", "skipping"} {
		if !strings.Contains(filepath.ToSlash(tb.skipped), want) {
			t.Errorf("skip message %q does not contain %q", tb.skipped, want)
		}
	}
}
