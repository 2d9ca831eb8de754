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

// A fraction where a deployment takes an integer is refused at its place,
// from a deployment file and from --grid, as --num-instances 1.5 is.
func TestFractionsForIntegers(t *testing.T) {
	dep := filepath.Join(t.TempDir(), "d.yaml")
	if err := os.WriteFile(dep, []byte("max_num_seqs: 8\nnum_instances: 2.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wl := []string{"--workload", "chatbot", "--rate", "5", "--num-requests", "20", "--quiet"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--deployment", dep}, dep + `:2:16: key num_instances: "2.9" is not an integer`},
		{[]string{"sweep", "--grid", "num_instances=1.5"}, `"1.5" is not an integer`},
		{[]string{"sweep", "--grid", "total_kv_blocks=999.9"}, `"999.9" is not an integer`},
	} {
		out, errs, code := runCmd(t, "", append(tc.args, wl...)...)
		if code != 2 || out != "" || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
}

// An output that is one of the inputs is refused before any work, exit 2,
// one line, and the input is left as it was.
func TestOutputIsNoInput(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(spec, []byte("grid:\n  num_instances: [1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dep := filepath.Join(dir, "d.yaml")
	if err := os.WriteFile(dep, []byte("max_num_seqs: 8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shard := filepath.Join(dir, "shard.json")
	wl := []string{"--workload", "chatbot", "--rate", "5", "--num-requests", "20", "--quiet"}
	if out, errs, code := runCmd(t, "", append([]string{"sweep", "--sweep", spec, "--format", "json", "-o", shard}, wl...)...); code != 0 {
		t.Fatalf("the shard: exit %d: %s %s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append([]string{"sweep", "--sweep", spec, "-o", spec}, wl...), "--output " + spec + " is the same file as --sweep " + spec},
		{append([]string{"sweep", "--sweep", spec, "--html", filepath.Join(dir, ".", "s.yaml")}, wl...), "is the same file as --sweep " + spec},
		{append([]string{"sweep", "--grid", "num_instances=1", "--deployment", dep, "-o", dep}, wl...), "--output " + dep + " is the same file as --deployment " + dep},
		{[]string{"sweep", "merge", shard, "-o", shard}, "--output " + shard + " is the same file as the shard " + shard},
		{append([]string{"--deployment", dep, "--metrics-out", dep}, wl...), "--metrics-out " + dep + " is the same file as --deployment " + dep},
		{append([]string{"--trace-output", dir + "/"}, wl...), "--trace-output " + dir + "/ names a directory"},
		{append([]string{"--metrics-out", dir}, wl...), "--metrics-out " + dir + " is a directory"},
	} {
		out, errs, code := runCmd(t, "", tc.args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if code != 2 || out != "" || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, one line with %q", tc.args, code, errs, tc.want)
		}
	}
	if b, _ := os.ReadFile(spec); string(b) != "grid:\n  num_instances: [1]\n" {
		t.Errorf("the sweep file changed: %q", b)
	}
}
