package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestTimeline: --timeline writes a valid trace-event JSON with the step,
// counter and request tracks, and leaves the SimResults unchanged.
func TestTimeline(t *testing.T) {
	dir := t.TempDir()
	dep := []string{"--total-kv-blocks", "160", "--max-model-len", "2048"}
	execRun(t, append([]string{"--workload", "chatbot", "--rate", "40", "--num-requests", "60", "--trace-output", filepath.Join(dir, "gen")}, dep...)...)
	tl := filepath.Join(dir, "tl.json")
	with := mustReplay(t, nil, append([]string{filepath.Join(dir, "gen.csv"), "--timeline", tl}, dep...)...)
	without := mustReplay(t, nil, append([]string{filepath.Join(dir, "gen.csv")}, dep...)...)
	if with.stdout != without.stdout {
		t.Error("SimResults differ with --timeline")
	}
	b, err := os.ReadFile(tl)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		TraceEvents []struct {
			Ph   string         `json:"ph"`
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("timeline: %v", err)
	}
	seen := map[string]int{}
	for _, e := range f.TraceEvents {
		key := e.Ph + " " + e.Name
		if e.Ph == "M" {
			key += " " + e.Args["name"].(string)
		}
		seen[key]++
	}
	for _, want := range []string{"M process_name instance_0 (160 KV blocks of 16 tokens)", "M thread_name steps",
		"M thread_name requests", "X step", "C kv_cache", "C batch", "b request", "e request", "b queued",
		"b prefill", "b decode", "b preempted", "b recompute"} {
		if seen[want] == 0 {
			t.Errorf("no %q event", want)
		}
	}
	if seen["b request"] != 60 || seen["e request"] != 60 {
		t.Errorf("%d request slices begin and %d end, want 60", seen["b request"], seen["e request"])
	}
}
