package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"servesim/internal/tracev2"
)

// TestTraceNamesNoFile: a header whose model, GPU and hardware file are
// /dev/zero, a FIFO no one writes to, or /proc/self/environ replays on the
// defaults with a warning for each, and opens none of them (a FIFO opened
// would block forever, /dev/zero read would exhaust memory).
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
		var buf bytes.Buffer
		if err := tracev2.EncodeHeader(&buf, h); err != nil {
			t.Fatal(err)
		}
		writeFile(t, prefix+".yaml", buf.String())
		r := mustReplay(t, nil, prefix+".csv", "--format", "text")
		for _, want := range []string{
			`the trace's model \"` + p + `\" is not one the simulator knows; simulating qwen3-14b instead`,
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
