package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree builds <tmp>/repo/go.mod, <tmp>/repo/pkg/sub and
// <tmp>/shared/data/runs/a.csv, and returns <tmp>.
func tree(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	for _, d := range []string{"repo/pkg/sub", "shared/data/runs"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"repo/go.mod", "shared/data/runs/a.csv"} {
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
		{"file from a nested package", "repo/pkg/sub", "runs/a.csv", "shared/data/runs/a.csv", ""},
		{"folder from the module root", "repo", "runs", "shared/data/runs", ""},
		{"the data folder itself", "repo/pkg", "", "shared/data", ""},
		{"absent file", "repo/pkg", "runs/b.csv", "", "real data absent"},
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
