package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/tracev2"
)

// TestReplaySeveralTraces: the slices of one run (here a generated trace
// split by request id into two "workers", the second starting 3 ms later
// on its own clock) replayed together give the same results as the whole
// trace: they are merged by time onto the first worker's start.
func TestReplaySeveralTraces(t *testing.T) {
	whole := execRun(t, "--workload", "chatbot", "--rate", "20", "--num-requests", "60", "--trace-output", "-")
	tr, err := tracev2.Load(tracev2.Input{Path: "-", Stdin: bytes.NewReader(whole)}, tracev2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var parts []string
	for w := range 2 {
		h := tr.Header.Clone()
		h.CreatedAt = "2026-05-01T10:00:00.000000Z"
		shift := int64(0)
		if w == 1 {
			h.CreatedAt, shift = "2026-05-01T10:00:00.003000Z", -3000
		}
		var recs []tracev2.Record
		for _, r := range tr.Records {
			if r.RequestID%2 == int64(w) {
				r.Shift(shift)
				recs = append(recs, r)
			}
		}
		prefix := filepath.Join(dir, "w"+string(rune('0'+w)))
		if err := tracev2.WriteFiles(prefix+".yaml", prefix+".csv", h, tr.Columns, false, recs); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, prefix+".csv")
	}
	wholePath := filepath.Join(dir, "whole.trace")
	if err := os.WriteFile(wholePath, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	want := mustReplay(t, nil, wholePath, "--inject-at", "arrival", "--format", "text")
	got := mustReplay(t, nil, append(parts, "--inject-at", "arrival", "--format", "text")...)
	if got.stdout != want.stdout || !strings.Contains(got.stdout, "injected 60") {
		t.Errorf("replaying the two slices:\n%s\nreplaying the whole:\n%s", got.stdout, want.stdout)
	}
}
