package clitest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"servesim/internal/exitcode"
)

func TestRun(t *testing.T) {
	echo := func(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
		in, _ := io.ReadAll(stdin)
		fmt.Fprintf(stdout, "%q %s", args, in)
		fmt.Fprint(stderr, "log\n")
		if len(args) > 1 && args[1] == "bad" {
			return exitcode.Usagef("bad usage")
		}
		return nil
	}
	tests := []struct {
		name               string
		args               []string
		wantOut, wantErr   string
		wantCode           int
		wantNonNilErrValue bool
	}{
		{"success", []string{"ok"}, `["tool" "ok"] `, "log\n", 0, false},
		{"usage error reported like main", []string{"bad"}, `["tool" "bad"] `, "log\ntool: bad usage\n", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Run(context.Background(), "tool", echo, nil, tt.args...)
			if got.Stdout != tt.wantOut || got.Stderr != tt.wantErr || got.Code != tt.wantCode || (got.Err != nil) != tt.wantNonNilErrValue {
				t.Errorf("Run = %+v, want stdout %q, stderr %q, code %d", got, tt.wantOut, tt.wantErr, tt.wantCode)
			}
		})
	}
}

// recordingTB records errors instead of failing the test.
type recordingTB struct {
	testing.TB
	errors int
}

func (r *recordingTB) Helper()               {}
func (r *recordingTB) Errorf(string, ...any) { r.errors++ }

func TestGolden(t *testing.T) {
	t.Chdir(t.TempDir())                 // restored when the test ends
	Golden(t, true, "a.golden", "one\n") // creates testdata/
	if b, err := os.ReadFile(filepath.Join("testdata", "a.golden")); err != nil || string(b) != "one\n" {
		t.Fatalf("golden after -update = %q, %v; want %q", b, err, "one\n")
	}
	for _, tt := range []struct {
		got        string
		wantErrors int
	}{{"one\n", 0}, {"two\n", 1}} {
		rec := &recordingTB{TB: t}
		Golden(rec, false, "a.golden", tt.got)
		if rec.errors != tt.wantErrors {
			t.Errorf("Golden(%q) reported %d errors, want %d", tt.got, rec.errors, tt.wantErrors)
		}
	}
}
