package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"servesim/internal/testkit/clitest"
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
	events := clitest.ReadTimeline(t, tl)
	seen := map[string]int{}
	for _, e := range events {
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

// TestTimelineCluster: --timeline on a P/D cluster writes one process per
// instance, named with its pool, holding as many step slices as the
// summary's per-instance steps, and a router process with a routing
// instant per routed request or part and a slice per KV transfer; the
// SimResults are unchanged.
func TestTimelineCluster(t *testing.T) {
	dir := t.TempDir()
	execRun(t, "--workload", "chatbot", "--rate", "40", "--num-requests", "60", "--trace-output", filepath.Join(dir, "gen"))
	dep := []string{filepath.Join(dir, "gen.csv"), "--prefill-instances", "1", "--decode-instances", "2", "--pd-decider", "always",
		"--metrics-out", filepath.Join(dir, "m.json")}
	tl := filepath.Join(dir, "tl.json")
	with := mustReplay(t, nil, append(dep, "--timeline", tl)...)
	without := mustReplay(t, nil, dep...)
	if with.stdout != without.stdout {
		t.Error("SimResults differ with --timeline")
	}
	var m struct {
		PerInstance []struct {
			Pool   string `json:"pool"`
			Routed int64  `json:"routed_requests"`
			Steps  int64  `json:"steps"`
		} `json:"per_instance"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "m.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil || len(m.PerInstance) != 3 {
		t.Fatalf("metrics: %v, %d instances", err, len(m.PerInstance))
	}
	events := clitest.ReadTimeline(t, tl)
	names := map[int]string{}
	steps, requests := map[int]int64{}, map[int]int64{}
	var routed, transfers int64
	for _, e := range events {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			names[e.Pid] = e.Args["name"].(string)
		case e.Ph == "X":
			steps[e.Pid]++
		case e.Ph == "b" && e.Name == "request":
			requests[e.Pid]++
		case e.Ph == "i" && e.Name == "routed":
			routed++
		case e.Ph == "b" && e.Cat == "kv_transfer":
			transfers++
		}
	}
	var wantRouted int64
	for i, is := range m.PerInstance {
		wantRouted += is.Routed
		if want := fmt.Sprintf("instance_%d %s (", i, is.Pool); !strings.HasPrefix(names[i], want) {
			t.Errorf("process %d is %q, want %q…", i, names[i], want)
		}
		if steps[i] != is.Steps || requests[i] != is.Routed {
			t.Errorf("instance %d: %d steps and %d requests, summary %d and %d", i, steps[i], requests[i], is.Steps, is.Routed)
		}
	}
	// Every request disaggregates: 60 prefill parts, then one transfer
	// per decode part.
	if names[3] != "router" || routed != wantRouted || transfers != m.PerInstance[1].Routed+m.PerInstance[2].Routed || requests[0] != 60 {
		t.Errorf("router %q: %d routed, %d transfers; want %d routed, one transfer per decode part, 60 prefill parts (have %d)",
			names[3], routed, transfers, wantRouted, requests[0])
	}
}
