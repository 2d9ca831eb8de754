package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"servesim/internal/testkit/shareddata"
)

// TestPipeIsReadOnce: a trace named by a path that is a pipe (a FIFO, or
// bash's <(zcat trace.gz)) is read once, as stdin is — its format detected
// from its first bytes, its rows then imported and replayed — with the
// results of the same trace read from its file, and so are a TraceV2
// header and data given as two pipes; a bad row in any is an error located
// in the path given. Each is read once: a pipe opened a second time would
// have lost the bytes the first reading took.
func TestPipeIsReadOnce(t *testing.T) {
	for _, rel := range []string{"mooncake/conversation_trace_5min.jsonl", "azure-llm-2023/AzureLLMInferenceTrace_conv_10min.csv"} {
		path := shareddata.Path(t, rel)
		content, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := mustReplay(t, nil, path, "--format", "text")
		for _, sub := range []string{"", "sweep"} {
			args := []string{fifoOf(t, content, filepath.Base(path)), "--format", "text"}
			if sub != "" {
				args = append([]string{sub, "--grid", "max_num_seqs=64,128"}, args...)
				want = mustReplay(t, nil, append(append([]string{}, args[:3]...), append([]string{path}, args[4:]...)...)...)
			}
			got := mustReplay(t, nil, args...)
			if got.stdout != want.stdout || got.stdout == "" {
				t.Errorf("%s %s from a pipe:\n%s\nfrom the file:\n%s", rel, sub, got.stdout, want.stdout)
			}
		}
	}
	// A TraceV2 trace whose header and data are both pipes.
	dir := t.TempDir()
	execRun(t, "--num-requests", "40", "--trace-output", filepath.Join(dir, "t"))
	hdr, err := os.ReadFile(filepath.Join(dir, "t.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "t.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := mustReplay(t, nil, "--trace-header", filepath.Join(dir, "t.yaml"), "--trace-data", filepath.Join(dir, "t.csv"), "--format", "text")
	got := mustReplay(t, nil, "--trace-header", fifoOf(t, hdr, "t.yaml"), "--trace-data", fifoOf(t, data, "t.csv"), "--format", "text")
	if got.stdout != want.stdout || !strings.Contains(got.stdout, "completed 40") {
		t.Errorf("header and data from pipes:\n%s\nfrom their files:\n%s", got.stdout, want.stdout)
	}
	badData := fifoOf(t, append(append([]byte{}, data...), "not,a,row\n"...), "bad.csv")
	r := replayIn(nil, "--trace-header", fifoOf(t, hdr, "t.yaml"), "--trace-data", badData, "--quiet")
	if r.err == nil || !strings.Contains(r.err.Error(), badData+":42") || strings.Contains(r.err.Error(), "trace-pipe-") {
		t.Errorf("a bad row in a data pipe: %v; want it located in %s, line 42", r.err, badData)
	}

	// A header pipe larger than a header may be is copied only as far as
	// the reader's bound, and refused.
	huge := fifoOf(t, bytes.Repeat([]byte("# a comment line of a huge header\n"), 600_000), "huge.yaml")
	r = replayIn(nil, "--trace-header", huge, "--trace-data", filepath.Join(dir, "t.csv"), "--quiet")
	if r.err == nil || !strings.Contains(r.err.Error(), "huge.yaml") || !strings.Contains(r.err.Error(), "larger than 16 MiB") {
		t.Errorf("a 20 MB header pipe: %v; want it refused as larger than 16 MiB, named by its path", r.err)
	}

	// Warnings name the pipe too.
	short := `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0]}` + "\n"
	warned := replayIn(nil, fifoOf(t, []byte(short), "short.jsonl"), "--results-path", filepath.Join(dir, "r.json"))
	if warned.err != nil || !strings.Contains(warned.stderr, "short.jsonl:1: hash_ids has 1 blocks") || strings.Contains(warned.stderr, "<stdin>") {
		t.Errorf("a warning about a pipe's row: %v\n%s", warned.err, warned.stderr)
	}

	bad := `{"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]}` + "\n" +
		`{"timestamp": 1, "input_length": x}` + "\n"
	r = replayIn(nil, fifoOf(t, []byte(bad), "trace.fifo"), "--quiet")
	if r.err == nil || !strings.Contains(r.err.Error(), ":2:") || r.stdout != "" || !strings.Contains(r.err.Error(), "trace.fifo:2:") {
		t.Errorf("a bad row in a pipe: err %v, stdout %q; want a located error and nothing on stdout", r.err, r.stdout)
	}
}

// fifoOf returns the path of a FIFO, of the given base name, that a
// goroutine fills with content.
func fifoOf(t *testing.T, content []byte, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	go func() {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		f.Write(content)
	}()
	return p
}
