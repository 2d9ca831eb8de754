package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
)

// sweepSummary is the part of PREFIX.sweep.json the tests read.
type sweepSummary struct {
	Ceiling float64 `json:"ceiling_request_throughput"`
	Levels  []struct {
		Kind       string  `json:"kind"`
		Trace      string  `json:"trace"`
		Completed  int     `json:"completed"`
		Throughput float64 `json:"request_throughput"`
		Stopped    bool    `json:"stopped_early"`
		Reason     string  `json:"stop_reason"`
	} `json:"levels"`
}

// TestSweepFindsCapacity sweeps a fake server that serves two requests at
// a time, each for 4 ms + 3 × 2 ms: the throughput level's ceiling is the
// server's capacity (two over its mean service time, from the server's own
// record) within 10%; a level at four times its nominal 200 req/s is stopped
// early, saying why; one at a quarter of it runs whole (a loaded machine
// slows the in-process server, so the quarter leaves room).
func TestSweepFindsCapacity(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 4 * time.Millisecond, ITL: 2 * time.Millisecond, MaxRunning: 2, RecordTimings: true, KeepRequests: 1})
	prefix := filepath.Join(t.TempDir(), "sw")
	o := observeIn(testCtx(t), baseArgs(srv, "--no-self-test", "--streaming", "-n", "200", "--sweep", "--rates", "50,800",
		"--drain-timeout", "30s", "-o", prefix)...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	data, err := os.ReadFile(prefix + ".sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	var sum sweepSummary
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	kinds := []string{}
	for _, l := range sum.Levels {
		kinds = append(kinds, l.Kind)
	}
	if strings.Join(kinds, ",") != "synchronous,throughput,rate,rate" {
		t.Fatalf("levels %v, want synchronous, throughput and the two rates", kinds)
	}
	// The server's capacity from its own record of the throughput level:
	// the requests it completed over the time from its first admission to
	// its last chunk (the machine's own overheads included).
	tp := loadFiles(t, strings.TrimSuffix(sum.Levels[1].Trace, ".csv"))
	if x := tp.Header.XExt; x == nil || x.Client == nil || x.Client.SweepLevel != "throughput" {
		t.Errorf("the throughput level's header does not name its level: %+v", x)
	}
	var first, last time.Time
	n := 0
	for _, r := range tp.Records {
		tm, ok := srv.Timing(r.XRequestID)
		if !ok || len(tm.Chunks) == 0 {
			continue
		}
		if n == 0 || tm.Admitted.Before(first) {
			first = tm.Admitted
		}
		if end := tm.Chunks[len(tm.Chunks)-1]; end.After(last) {
			last = end
		}
		n++
	}
	if n != 200 {
		t.Fatalf("%d requests of the throughput level have the server's timing, want 200", n)
	}
	capacity := float64(n) / last.Sub(first).Seconds()
	t.Logf("ceiling %.1f req/s; the server's capacity %.1f req/s; the over-saturated level: %s", sum.Ceiling, capacity, sum.Levels[3].Reason)
	if sum.Ceiling < 0.9*capacity || sum.Ceiling > 1.1*capacity {
		t.Errorf("ceiling %.1f req/s (the throughput level's throughput %.1f), the server's capacity is %.1f req/s",
			sum.Ceiling, sum.Levels[1].Throughput, capacity)
	}
	half, over := sum.Levels[2], sum.Levels[3]
	if half.Stopped || half.Completed != 200 {
		t.Errorf("the level at 50 req/s: stopped %v (%q), %d completed; want it whole", half.Stopped, half.Reason, half.Completed)
	}
	if !over.Stopped || !strings.Contains(over.Reason, "behind and growing") || over.Completed >= 200 {
		t.Errorf("the level at 800 req/s: stopped %v (%q), %d completed; want it stopped early", over.Stopped, over.Reason, over.Completed)
	}
	if !strings.Contains(o.Stderr, "over-saturated") {
		t.Errorf("stderr does not say the level was stopped:\n%s", o.Stderr)
	}
}

// TestSweepFlagErrors: a sweep needs a trace prefix and a rate-based workload.
func TestSweepFlagErrors(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--sweep"}, "a sweep writes a trace per level: give --trace-output PREFIX"},
		{[]string{"--rates", "2,x", "-o", "p"}, `--rates "2,x": "x" is not a rate`},
		{[]string{"--sweep", "--concurrency", "4", "-o", filepath.Join(t.TempDir(), "p")}, "a sweep sends the workload at several rates: clients[0]: a concurrency client has no rate to set"},
		{[]string{"--sweep-output", "s.json", "-o", "p"}, "--sweep-output needs --sweep or --rates"},
	} {
		o := observeIn(testCtx(t), baseArgs(srv, append([]string{"--no-self-test"}, tc.args...)...)...)
		if o.Code != 2 || !strings.Contains(o.Stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, o.Code, o.Stderr, tc.msg)
		}
	}
}

// TestOverSaturated judges backlog samples without a clock: growth at each
// of the last three samples, at ≥ 10% of the offered rate, to ≥ 16
// requests behind.
func TestOverSaturated(t *testing.T) {
	for _, tc := range []struct {
		rate    float64
		backlog []int64
		want    bool
	}{
		{100, []int64{0, 5, 10, 20, 30}, true},     // 20 more in 0.3 s: 67/s against 100/s offered
		{100, []int64{0, 2, 3, 2, 3}, false},       // steady around rate × latency
		{1000, []int64{30, 31, 32, 33, 34}, false}, // growing 10/s, 1% of 1,000/s: noise
		{100, []int64{30, 31, 32, 33, 34}, true},   // the same growth is 10% of 100/s
		{100, []int64{0, 1, 2, 3, 4}, false},       // growing, but only 4 behind
		{100, []int64{40, 30, 35, 40, 45}, true},   // the last three steps count
		{100, []int64{20, 30, 40, 39, 50}, false},  // one step back
		{100, []int64{18, 19, 20}, false},          // too few samples
	} {
		m := &saturation{rate: tc.rate, period: 100 * time.Millisecond}
		if why, got := m.overSaturated(tc.backlog); got != tc.want {
			t.Errorf("%g req/s, backlog %v: over-saturated %v (%q), want %v", tc.rate, tc.backlog, got, why, tc.want)
		}
	}
}
