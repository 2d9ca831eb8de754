package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
)

// TestTraceNamesNoFile: a header whose model, GPU and hardware file are
// /dev/zero, a FIFO no one writes to, or /proc/self/environ opens none of
// them (a FIFO opened would block forever, /dev/zero read would exhaust
// memory): the unknown model is refused (exit 2) unless --model gives one;
// then it replays on the default GPU with a warning for the GPU and the
// hardware file.
func TestTraceNamesNoFile(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "t")
	execRun(t, "--workload", "chatbot", "--rate", "20", "--num-requests", "20", "--trace-output", prefix)
	tr, err := tracev2.Load(tracev2.Input{Path: prefix + ".csv"}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dev/zero", fifo, "/proc/self/environ"} {
		h := tr.Header
		for _, k := range []string{"model", "gpu", "hardware_file"} {
			h.XExt.Deployment[k] = p
		}
		h.Server.Model = p
		var buf bytes.Buffer
		if err := tracev2.EncodeHeader(&buf, h); err != nil {
			t.Fatal(err)
		}
		writeFile(t, prefix+".yaml", buf.String())
		if r := replayIn(nil, prefix+".csv", "--format", "text"); exitcode.Of(r.err) != exitcode.Usage ||
			!strings.Contains(r.stderr, `the trace's model: unknown model "`+p+`"`) {
			t.Errorf("%s: exit %d, stderr %s; want the unknown model refused", p, exitcode.Of(r.err), r.stderr)
		}
		r := mustReplay(t, nil, prefix+".csv", "--format", "text", "--model", "qwen3-14b")
		for _, want := range []string{
			`the trace names the hardware file \"` + p + `\", which is not opened`,
			`the trace's GPU \"` + p + `\" is not one the simulator knows; simulating H100 instead`,
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", p, want, r.stderr)
			}
		}
		if !strings.Contains(r.stdout, "qwen3-14b") {
			t.Errorf("%s: the default model was not simulated:\n%s", p, r.stdout)
		}
	}
}

// TestOutputIsNoInput: an output that is one of the inputs (the same file
// under any name, the trace-output prefix resolved to its pair), a
// directory, or a prefix without a file name is refused before anything is
// read, exit 2, one line; the input is left as it was.
func TestOutputIsNoInput(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "in")
	execRun(t, "--workload", "chatbot", "--rate", "20", "--num-requests", "20", "--trace-output", prefix)
	dep := writeFile(t, filepath.Join(dir, "d.yaml"), "max_num_seqs: 8\n")
	before, err := os.ReadFile(prefix + ".csv")
	if err != nil {
		t.Fatal(err)
	}
	in := prefix + ".csv"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trace-output", prefix}, "--trace-output (header) " + prefix + ".yaml is the same file as the input " + prefix + ".yaml"},
		{[]string{"--results-path", in}, "--results-path " + in + " is the same file as the input " + in},
		{[]string{"--results-path", filepath.Join(dir, ".", "in.csv")}, "is the same file as the input " + in},
		{[]string{"--metrics-out", prefix + ".yaml"}, "--metrics-out " + prefix + ".yaml is the same file as the input"},
		{[]string{"--requests-out", dep, "--deployment", dep}, "--requests-out " + dep + " is the same file as --deployment " + dep},
		{[]string{"--results-path", dir}, "--results-path " + dir + " is a directory: name a file"},
		{[]string{"--timeline", filepath.Join(dir, "no", "t.json")}, "directory " + filepath.Join(dir, "no") + " does not exist"},
		{[]string{"--trace-output", dir + "/"}, "--trace-output " + dir + "/ names a directory: give a prefix with a file name"},
	} {
		r := replayIn(nil, append([]string{in, "--quiet"}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if exitcode.Of(r.err) != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, one line with %q", tc.args, exitcode.Of(r.err), r.stderr, tc.want)
		}
		if after, _ := os.ReadFile(in); !bytes.Equal(after, before) {
			t.Fatalf("%v: the input trace changed", tc.args)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".csv")); err == nil {
		t.Error("a hidden .csv was written into the directory")
	}
}

// TestHeaderClientOutOfBounds: a header's client beyond the simulator's
// bounds is bad input, refused before the simulation with exit 2.
func TestHeaderClientOutOfBounds(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "t")
	execRun(t, "--workload", "chatbot", "--rate", "20", "--num-requests", "20", "--trace-output", prefix)
	tr, err := tracev2.Load(tracev2.Input{Path: prefix + ".csv"}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := tr.Header
	h.XExt.Client = &tracev2.Client{MaxConcurrency: 1_000_000_000_000}
	var buf bytes.Buffer
	if err := tracev2.EncodeHeader(&buf, h); err != nil {
		t.Fatal(err)
	}
	writeFile(t, prefix+".yaml", buf.String())
	r := replayIn(nil, prefix+".csv", "--quiet", "--format", "text")
	want := prefix + ".csv: x_ext.client: client max concurrency 1000000000000 is outside [0, 16777216]"
	if exitcode.Of(r.err) != 2 || !strings.Contains(r.stderr, want) || r.stdout != "" {
		t.Errorf("exit %d, stderr %q; want exit 2 with %q", exitcode.Of(r.err), r.stderr, want)
	}
}

// TestHeaderDeploymentValuesLocated: a bad value of the header's
// x_ext.deployment is refused at its line and column, exit 2.
func TestHeaderDeploymentValuesLocated(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "t")
	execRun(t, "--workload", "chatbot", "--rate", "20", "--num-requests", "20", "--trace-output", prefix)
	tr, err := tracev2.Load(tracev2.Input{Path: prefix + ".csv"}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	orig := tr.Header.XExt.Deployment
	for _, tc := range []struct {
		key  string
		v    any
		list bool // the value is on the line after its key
		want string
	}{
		{"num_instances", 2.9, false, `"2.9" is not an integer`},
		{"total_kv_blocks", 1e12, false, "1000000000000 exceeds 1073741823, the most a KV cache can hold"},
		{"num_instances", []any{2}, true, "want an integer, got a list"},
	} {
		dep := maps.Clone(orig)
		dep[tc.key] = tc.v
		tr.Header.XExt.Deployment = dep
		var buf bytes.Buffer
		if err := tracev2.EncodeHeader(&buf, tr.Header); err != nil {
			t.Fatal(err)
		}
		writeFile(t, prefix+".yaml", buf.String())
		at, inDep := "", false
		for i, l := range strings.Split(buf.String(), "\n") {
			inDep = inDep || strings.TrimSpace(l) == "deployment:"
			if c := strings.Index(l, tc.key+":"); inDep && at == "" && c >= 0 {
				at = fmt.Sprintf("%d:%d", i+1, c+len(tc.key)+3)
				if tc.list {
					at = fmt.Sprintf("%d:", i+2)
				}
			}
		}
		r := replayIn(nil, prefix+".csv", "--quiet", "--format", "text")
		want := fmt.Sprintf("%s.yaml:%s", prefix, at)
		msg := fmt.Sprintf("key x_ext.deployment.%s: %s", tc.key, tc.want)
		if exitcode.Of(r.err) != 2 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, msg) {
			t.Errorf("%s %v: exit %d, stderr %q; want exit 2 with %q and %q", tc.key, tc.v, exitcode.Of(r.err), r.stderr, want, msg)
		}
	}
}
