package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An output that is one of the inputs, a trace fitted twice, and a round
// trip no network has are refused before any work: exit 2, one line, the
// inputs left as they were.
func TestOutputIsNoInputAndTracesOnce(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "real.csv")
	data := readFile(t, realCSV)
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "real.yaml"), []byte(readFile(t, strings.TrimSuffix(realCSV, ".csv")+".yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "again.csv")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fit", in, "-o", in}, "--output " + in + " is the same file as the input " + in},
		{[]string{"fit", in, "-o", filepath.Join(dir, "real.yaml")}, "--output " + filepath.Join(dir, "real.yaml") + " is the same file as the input"},
		{[]string{"fit", in, in, "-o", filepath.Join(dir, "f.yaml")}, in + " is the same trace as " + in + ": a trace given twice would count twice in the fit"},
		{[]string{"fit", in, link, "-o", filepath.Join(dir, "f.yaml")}, link + " is the same trace as " + in},
		{[]string{"fit", in, "--network-rtt-us", "10000001"}, "--network-rtt-us 10000001: want -1 (the header's RTT) or a round trip in [0, 10000000] (10 s)"},
		{[]string{"fit", in, "-o", dir}, "--output " + dir + " is a directory"},
		{[]string{in, simJSON, "--html", in}, "--html " + in + " is the same file as the input " + in},
		{[]string{in, simJSON, "--report", simJSON}, "--report " + simJSON + " is the same file as the simulated results " + simJSON},
		{[]string{in, simJSON, "--network-rtt-us", "100000000000"}, "--network-rtt-us 100000000000: want -1"},
	} {
		out, errs, code := runCmd(t, "", tc.args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if code != 2 || out != "" || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, one line with %q", tc.args, code, errs, tc.want)
		}
		if got := readFile(t, in); got != data {
			t.Fatalf("%v: the input changed", tc.args)
		}
	}
}

// A trace without rows is refused by its name, not as "no request to
// fit" without one.
func TestFitEmptyTraceNamed(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "h.csv")
	if err := os.WriteFile(h, []byte(strings.SplitN(readFile(t, realCSV), "\n", 2)[0]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "h.yaml"), []byte(readFile(t, strings.TrimSuffix(realCSV, ".csv")+".yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCmd(t, "", "fit", h)
	if want := h + ": the trace has no rows: nothing to fit"; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr %q; want exit 2 with %q", code, errs, want)
	}
}
