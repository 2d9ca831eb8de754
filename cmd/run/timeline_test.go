package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"servesim/internal/testkit/clitest"
)

// TestTimeline: run --timeline on a P/D cluster prints the same summary as
// without it and writes a trace-event JSON with a process per instance and
// the router, one step slice per step of each instance; "-" is refused.
func TestTimeline(t *testing.T) {
	tl := filepath.Join(t.TempDir(), "tl.json")
	args := []string{"--workload", "chatbot", "--rate", "30", "--num-requests", "40",
		"--prefill-instances", "1", "--decode-instances", "1", "--pd-decider", "always"}
	without, errs, code := runCmd(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	with, errs, code := runCmd(t, "", append(args, "--timeline", tl)...)
	if code != 0 || with != without {
		t.Fatalf("exit %d (%s); summary equal without the timeline: %v", code, errs, with == without)
	}
	var sum struct {
		PerInstance []struct {
			Steps int64 `json:"steps"`
		} `json:"per_instance"`
	}
	if err := json.Unmarshal([]byte(with), &sum); err != nil || len(sum.PerInstance) != 2 {
		t.Fatalf("summary: %v, %d instances", err, len(sum.PerInstance))
	}
	events := clitest.ReadTimeline(t, tl)
	steps, procs := map[int]int64{}, map[int]string{}
	for _, e := range events {
		switch {
		case e.Ph == "X":
			steps[e.Pid]++
		case e.Ph == "M" && e.Name == "process_name":
			procs[e.Pid] = e.Args["name"].(string)
		}
	}
	for i, is := range sum.PerInstance {
		if steps[i] != is.Steps || is.Steps == 0 {
			t.Errorf("instance %d: %d step slices, summary %d steps", i, steps[i], is.Steps)
		}
	}
	if len(procs) != 3 || procs[2] != "router" {
		t.Errorf("processes %v: want two instances and the router", procs)
	}
	if _, _, code := runCmd(t, "", append(args, "--timeline", "-")...); code != 2 {
		t.Errorf("--timeline -: exit %d, want 2", code)
	}
}
