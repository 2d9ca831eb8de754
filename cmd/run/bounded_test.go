package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every input read whole is bounded: /dev/zero and a file of gigabytes
// are refused after the bound, in one line naming the file and the bound,
// exit 2, before any work.
func TestWholeInputsAreBounded(t *testing.T) {
	huge := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	wl := []string{"--workload", "chatbot", "--rate", "5", "--num-requests", "20", "--quiet"}
	for _, src := range []struct{ path, bound string }{{"/dev/zero", "16 MiB"}, {huge, "16 MiB"}} {
		for _, tc := range []struct {
			args  []string
			bound string
		}{
			{[]string{"--deployment", src.path}, src.bound},
			{[]string{"--workload-spec", src.path}, src.bound},
			{[]string{"--hardware-file", src.path, "--gpu", "H100"}, src.bound},
			{[]string{"--model", src.path}, src.bound},
			{[]string{"sweep", "--sweep", src.path}, src.bound},
			{[]string{"sweep", "--grid", "num_instances=1", "--prices", src.path}, src.bound},
			{[]string{"sweep", "--grid", "num_instances=1", "--workload-spec", src.path}, src.bound},
			{[]string{"sweep", "merge", src.path}, "256 MiB"},
		} {
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "merge") && !strings.Contains(strings.Join(args, " "), "workload-spec") {
				args = append(append([]string{}, args...), wl...)
			}
			out, errs, code := runCmd(t, "", args...)
			want := src.path + ": larger than " + tc.bound + ", the bound on this input"
			lines := strings.Split(strings.TrimSpace(errs), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], want) || out != "" {
				t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2 and one line with %q", args, code, len(out), errs, want)
			}
		}
	}
}
