package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/sweep"
	"servesim/internal/testkit/clitest"
)

// sweepDoc is the sweep document a successful observe sweep wrote.
func sweepDoc(t *testing.T, o clitest.Result, prefix string) *sweep.Doc {
	t.Helper()
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	data, err := os.ReadFile(prefix + ".sweep.json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := sweep.DecodeDoc(prefix+".sweep.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSweepFindsCapacity sweeps a fake server that serves two requests at
// a time, each for 4 ms + 3 × 2 ms, with an SLO. The rows are run sweep's
// (its document, table and SLO verdicts): the throughput level's
// throughput is the server's capacity (from the server's own record)
// within 10%; a level at four times its nominal 200 req/s is stopped early,
// unstable, saying why; one at a quarter of it runs whole and is judged by
// the SLO (a loaded machine slows the in-process server, so the quarter
// leaves room).
func TestSweepFindsCapacity(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 4 * time.Millisecond, ITL: 2 * time.Millisecond, MaxRunning: 2, RecordTimings: true, KeepRequests: 1})
	prefix := filepath.Join(t.TempDir(), "sw")
	o := observeIn(testCtx(t), baseArgs(srv, "--no-self-test", "--streaming", "-n", "200", "--sweep", "--rates", "50,800",
		"--slo", "ttft.p99<10s", "--html", prefix+".html", "--drain-timeout", "30s", "-o", prefix)...)
	d := sweepDoc(t, o, prefix)
	var levels []string
	for _, r := range d.Rows {
		levels = append(levels, r.Param("rate")+"/"+r.Role)
	}
	if strings.Join(levels, ",") != "synchronous/grid,throughput/probe,50/grid,800/grid" || d.Command != "observe sweep" || d.SLO == "" {
		t.Fatalf("rows %v (command %q, SLO %q); want the synchronous, throughput, 50 and 800 levels", levels, d.Command, d.SLO)
	}
	// The server's capacity from its own record of the throughput level:
	// the requests it completed after its first completion, over the time
	// from that completion to its last (the first request's own time, on
	// a cold connection and under the race detector, says nothing of the
	// rate).
	tp := loadFiles(t, prefix+"-1-throughput")
	if x := tp.Header.XExt; x == nil || x.Client == nil || x.Client.SweepLevel != "rate=throughput" {
		t.Errorf("the throughput level's header does not name its level: %+v", x)
	}
	var first, last time.Time
	n := 0
	for _, r := range tp.Records {
		tm, ok := srv.Timing(r.XRequestID)
		if !ok || len(tm.Chunks) == 0 {
			continue
		}
		end := tm.Chunks[len(tm.Chunks)-1]
		if n == 0 || end.Before(first) {
			first = end
		}
		if end.After(last) {
			last = end
		}
		n++
	}
	if n != 200 {
		t.Fatalf("%d requests of the throughput level have the server's timing, want 200", n)
	}
	capacity := float64(n-1) / last.Sub(first).Seconds()
	quarter, over := d.Rows[2], d.Rows[3]
	t.Logf("capacity found %.1f req/s; the server's %.1f req/s; the level at 800 req/s: %s", d.Rows[1].ThroughputRPS, capacity, over.Reason)
	if got := d.Rows[1].ThroughputRPS; got < 0.9*capacity || got > 1.1*capacity {
		t.Errorf("capacity found %.1f req/s, the server's is %.1f req/s", got, capacity)
	}
	if quarter.Status != sweep.StatusOK || quarter.Completed != 200 || quarter.TTFT == nil || !quarter.Met() {
		t.Errorf("the level at 50 req/s: %s (%q), %d completed, SLO met %v; want it whole, ok and within the SLO",
			quarter.Status, quarter.Reason, quarter.Completed, quarter.Met())
	}
	if over.Status != sweep.StatusUnstable || !strings.Contains(over.Reason, "stopped early, over-saturated") || over.Completed >= 200 || over.TTFT != nil {
		t.Errorf("the level at 800 req/s: %s (%q), %d completed; want it stopped early and unstable", over.Status, over.Reason, over.Completed)
	}
	if sync := d.Rows[0]; sync.Status != sweep.StatusOK || sync.TTFT == nil {
		t.Errorf("the synchronous level: %s (%q); want ok, one request at a time queues nothing at the server", sync.Status, sync.Reason)
	}
	if !strings.Contains(o.Stdout, "(probe)") || !strings.Contains(o.Stdout, "cases meet ttft.p99<10s") || !strings.Contains(o.Stderr, "over-saturated") {
		t.Errorf("the table or the warning is missing:\nstdout:\n%s\nstderr:\n%s", o.Stdout, head(o.Stderr, 600))
	}
	if page, err := os.ReadFile(prefix + ".html"); err != nil || !strings.Contains(string(page), "<svg") {
		t.Errorf("no page with plots: %v", err)
	}
}

// TestSweepOverlay: a simulated sweep's document given to --overlay is
// drawn beside the measured levels: one document, rows tagged source=real
// and source=simulated, two curves on the page.
func TestSweepOverlay(t *testing.T) {
	runBin := bins.Path(t, "run")
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.json")
	cmd := exec.Command(runBin, "sweep", "--workload", "chatbot", "-n", "100", "--grid", "rate=5,10,20", "--format", "json", "-o", sim, "--quiet")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run sweep: %v\n%s", err, out)
	}
	srv := startFake(t, fakevllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	prefix := filepath.Join(dir, "sw")
	o := observeIn(testCtx(t), baseArgs(srv, "--no-self-test", "--streaming", "-n", "40", "--rates", "20,40",
		"--overlay", sim, "--html", prefix+".html", "--slo", "ttft.p99<10s", "-o", prefix)...)
	d := sweepDoc(t, o, prefix)
	sources := map[string]int{}
	for _, r := range d.Rows {
		sources[r.Param("source")]++
	}
	if sources["real"] != 2 || sources["simulated"] != 3 || d.Keys[0] != "source" {
		t.Errorf("rows by source %v, keys %v; want 2 real and 3 simulated", sources, d.Keys)
	}
	page, err := os.ReadFile(prefix + ".html")
	if err != nil || !strings.Contains(string(page), "source=real") || !strings.Contains(string(page), "source=simulated") {
		t.Errorf("the page does not name both curves: %v", err)
	}
	// The answer is the live server's: its two levels, not the simulated
	// cases; and a live server has no cost to chart.
	if a := d.Answer; a == nil || len(a.Verdict) != 1 || a.Verdict[0] != "2 of 2 cases meet ttft.p99<10s" || len(a.Pareto) != 0 {
		t.Errorf("answer %+v; want the verdict of the 2 live levels and no cost front", a)
	}
	if strings.Contains(string(page), "<h2>Cost</h2>") || !strings.Contains(o.Stdout, "2 of 2 cases meet") {
		t.Errorf("the page draws costs, or the table counts simulated cases:\n%s", o.Stdout)
	}
	checkSweepIgnored(t, dir)
	// An SLO no level meets is an assertion not met: exit 3, the files written.
	o = observeIn(testCtx(t), baseArgs(srv, "--no-self-test", "-n", "20", "--rates", "20", "--slo", "ttft.p50<1us", "-o", prefix+"-x")...)
	if _, err := os.Stat(prefix + "-x.sweep.json"); o.Code != 3 || err != nil {
		t.Errorf("an SLO no level meets: exit %d (want 3), document: %v", o.Code, err)
	}
}

// TestSweepFlagErrors: a sweep needs a trace prefix and a rate-based workload.
func TestSweepFlagErrors(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	shard := filepath.Join(t.TempDir(), "shard.json")
	os.WriteFile(shard, []byte(`{"format": "servesim-sweep/1", "command": "run sweep", "fingerprint": "f", "shard": "0/2", "cases": 2,
 "keys": ["rate"], "load_keys": ["rate"], "base": null, "prices": [], "rows": []}`), 0o644)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--sweep"}, "a sweep writes a trace per level: give --trace-output PREFIX"},
		{[]string{"--rates", "2,x", "-o", "p"}, `--rates "2,x": "x" is not a rate`},
		{[]string{"--sweep", "--concurrency", "4", "-o", filepath.Join(t.TempDir(), "p")}, "a sweep sends the workload at several rates: clients[0]: a concurrency client has no rate to set"},
		{[]string{"--sweep-output", "s.json", "-o", "p"}, "--slo, --sweep-output, --html and --overlay shape a sweep: give --sweep or --rates"},
		{[]string{"--rates", "5", "--slo", "ttft.p98<1s", "-o", "p"}, "--slo"},
		{[]string{"--rates", "5", "--overlay", shard, "-o", filepath.Join(t.TempDir(), "p")},
			shard + `:1:85: shard: "0/2": the document of one shard of a sweep; merge the shards first`},
	} {
		o := observeIn(testCtx(t), baseArgs(srv, append([]string{"--no-self-test"}, tc.args...)...)...)
		if o.Code != 2 || !strings.Contains(o.Stderr, tc.msg) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, o.Code, o.Stderr, tc.msg)
		}
	}
}

// checkSweepIgnored: what the --help sweep example writes (sw-<k>-<level>
// traces, sw.sweep.json, sim.json, an .html page) is ignored by git like
// the other examples' outputs, checked on the files a sweep wrote in dir.
func checkSweepIgnored(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	cmd := exec.Command("git", "-C", "../..", "check-ignore", "--no-index", "--stdin")
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	out, _ := cmd.Output() // exit 1 when none is ignored
	ignored := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		ignored[l] = true
	}
	for _, n := range names {
		if !ignored[n] {
			t.Errorf("a sweep wrote %s, which git does not ignore at the repository's root (add it to .gitignore)", n)
		}
	}
}

// TestSweepKeepsHealthyLongLevels: a server without a capacity limit whose
// requests last 800 ms, far longer than three sampling periods of a 2 s
// level, runs every level whole: the backlog's ramp to rate × latency is
// not over-saturation.
func TestSweepKeepsHealthyLongLevels(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 500 * time.Millisecond, ITL: 100 * time.Millisecond})
	prefix := filepath.Join(t.TempDir(), "sw")
	args := baseArgs(srv, "--no-self-test", "--streaming", "-n", "120", "--rates", "20,40", "--drain-timeout", "30s", "-o", prefix)
	args[1] = strings.Replace(args[1], "http://", "http://alice:hunter2hunter2@", 1) // a URL with a password
	o := observeIn(testCtx(t), args...)
	d := sweepDoc(t, o, prefix)
	// The URL's password is written nowhere: not in the document, not in the table.
	if b, _ := os.ReadFile(prefix + ".sweep.json"); strings.Contains(string(b)+o.Stdout+o.Stderr, "hunter2") {
		t.Errorf("the URL's password was written:\n%s", o.Stdout)
	}
	for _, r := range d.Rows {
		if r.Status != sweep.StatusOK || r.Completed != 120 {
			t.Errorf("level %s: %s (%q), %d completed; want ok and 120", r.Param("rate"), r.Status, r.Reason, r.Completed)
		}
	}
	if strings.Contains(o.Stderr, "over-saturated") {
		t.Errorf("a healthy level was stopped:\n%s", head(o.Stderr, 800))
	}
}
