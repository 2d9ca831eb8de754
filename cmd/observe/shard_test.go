package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/tracev2"
)

// sameRequests fails unless the two traces hold the same requests: ids,
// intended arrival times, lengths, clients and sessions.
func sameRequests(t *testing.T, got, want *tracev2.Trace) {
	t.Helper()
	if len(got.Records) != len(want.Records) {
		t.Fatalf("%d requests, want %d", len(got.Records), len(want.Records))
	}
	byID := map[int64]*tracev2.Record{}
	for i := range got.Records {
		byID[got.Records[i].RequestID] = &got.Records[i]
	}
	for _, w := range want.Records {
		g, ok := byID[w.RequestID]
		switch {
		case !ok:
			t.Errorf("request %d is missing", w.RequestID)
		case g.ArrivalTimeUs != w.ArrivalTimeUs || g.InputTokens != w.InputTokens || g.PrefixLength != w.PrefixLength ||
			g.ClientID != w.ClientID || g.SessionID != w.SessionID || g.RoundIndex != w.RoundIndex:
			t.Errorf("request %d: %s at %d µs, %d+%d tokens, session %q round %d; want %s at %d µs, %d+%d, %q round %d",
				w.RequestID, g.ClientID, g.ArrivalTimeUs, g.PrefixLength, g.InputTokens, g.SessionID, g.RoundIndex,
				w.ClientID, w.ArrivalTimeUs, w.PrefixLength, w.InputTokens, w.SessionID, w.RoundIndex)
		}
	}
}

// TestShardPlansMergeToTheRun: the planned slices of a sharded run (dry
// runs with --shard I/3), merged, are the single-machine plan, for a
// workload of plain requests, open sessions and closed-loop sessions; a
// session stays whole on one worker.
func TestShardPlansMergeToTheRun(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	writeFile(t, spec, `aggregate_rate: 30
num_requests: 240
clients:
  - {id: plain, rate_fraction: 2, arrival: {process: poisson}, input_distribution: {type: constant, params: {value: 20}}, output_distribution: {type: constant, params: {value: 4}}}
  - id: open
    rate_fraction: 1
    closed_loop: false
    arrival: {process: poisson}
    input_distribution: {type: uniform, params: {min: 5, max: 50}}
    output_distribution: {type: constant, params: {value: 4}}
    reasoning: {multi_turn: {max_rounds: 3, think_time_us: 100000, context_growth: accumulate}}
  - id: closed
    rate_fraction: 1
    arrival: {process: poisson}
    input_distribution: {type: constant, params: {value: 9}}
    output_distribution: {type: constant, params: {value: 4}}
    reasoning: {multi_turn: {max_rounds: 2, think_time_us: 1000}}
`)
	dir := t.TempDir()
	var parts []string
	for i := range 3 {
		prefix := filepath.Join(dir, "w"+strconv.Itoa(i))
		if o := observeIn(testCtx(t), "--dry-run", "--quiet", "--workload-spec", spec, "--shard", strconv.Itoa(i)+"/3", "-o", prefix); o.Err != nil {
			t.Fatalf("shard %d: exit %d: %v\n%s", i, o.Code, o.Err, o.Stderr)
		}
		part := loadFiles(t, prefix)
		if part.Header.XExt == nil || part.Header.XExt.Shard != strconv.Itoa(i)+"/3" {
			t.Fatalf("shard %d's header has no x_ext.shard: %+v", i, part.Header.XExt)
		}
		owner := map[string]bool{}
		for _, r := range part.Records {
			if r.SessionID != "" && r.RoundIndex == 0 {
				owner[r.SessionID] = true
			}
		}
		for _, r := range part.Records {
			if r.SessionID != "" && !owner[r.SessionID] {
				t.Errorf("shard %d sends round %d of %s without its round 0", i, r.RoundIndex, r.SessionID)
			}
		}
		parts = append(parts, prefix+".csv")
	}
	o := observeIn(testCtx(t), append([]string{"--merge", "--quiet", "-o", "-"}, parts...)...)
	if o.Err != nil {
		t.Fatalf("merge: exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	single := observeIn(testCtx(t), "--dry-run", "--quiet", "--workload-spec", spec, "-o", "-")
	if single.Err != nil {
		t.Fatal(single.Err)
	}
	sameRequests(t, loadStream(t, o.Stdout), loadStream(t, single.Stdout))
}

// TestShardsWithGNUParallel loads one server from four observe processes
// started by GNU parallel on loopback, each sending its slice (--shard
// {}/4) from one shared --start-at. Each worker's t0 is that instant; the
// merged trace holds the single-machine run's requests, each sent once and
// none before its intended time. The test is skipped where GNU parallel is
// absent, unless SERVESIM_REQUIRE_PARALLEL is set (CI installs it).
func TestShardsWithGNUParallel(t *testing.T) {
	par, err := exec.LookPath("parallel")
	if err != nil {
		if os.Getenv("SERVESIM_REQUIRE_PARALLEL") != "" {
			t.Fatal("GNU parallel is required here (SERVESIM_REQUIRE_PARALLEL is set) but not installed: apt-get install parallel")
		}
		t.Skip("GNU parallel is not installed (apt-get install parallel)")
	}
	bin := bins.Path(t, "observe")
	srv := startFake(t, fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond})
	dir := t.TempDir()
	// Time for parallel to start four workers and each to set up before
	// the shared start, with room for a loaded machine (4 s was not).
	start := time.Now().Add(10 * time.Second).Truncate(time.Microsecond)
	workload := []string{"--workload", "chatbot", "--rate", "200", "-n", "400", "--streaming",
		"--prompt-tokens-max", "64", "--output-tokens-max", "8"}
	args := []string{"--will-cite", "-j", "4", "--halt", "now,fail=1", bin, "--url", srv.URL(), "--quiet", "--no-self-test",
		"--start-at", start.UTC().Format(time.RFC3339Nano), "--shard", "{}/4", "--trace-output", filepath.Join(dir, "w{}")}
	args = append(append(args, workload...), ":::", "0", "1", "2", "3")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, par, args...).CombinedOutput(); err != nil {
		t.Fatalf("parallel: %v\n%s", err, out)
	}
	var parts []string
	for i := range 4 {
		p := filepath.Join(dir, "w"+strconv.Itoa(i))
		if x := loadFiles(t, p).Header.XExt; x == nil || x.T0UnixUs != start.UnixMicro() {
			t.Errorf("worker %d: t0 %+v, want the shared start %d", i, x, start.UnixMicro())
		}
		parts = append(parts, p+".csv")
	}
	o := observeIn(testCtx(t), append([]string{"--merge", "--quiet", "-o", "-"}, parts...)...)
	if o.Err != nil {
		t.Fatalf("merge: exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	merged := loadStream(t, o.Stdout)
	plan := observeIn(testCtx(t), append([]string{"--dry-run", "--quiet", "-o", "-"}, workload...)...)
	if plan.Err != nil {
		t.Fatal(plan.Err)
	}
	sameRequests(t, merged, loadStream(t, plan.Stdout))
	if n := srv.Stats().Requests; n != 400 {
		t.Errorf("the server saw %d requests, want 400", n)
	}
	for _, r := range merged.Records {
		if r.Status != "ok" || r.SendTimeUs < r.ArrivalTimeUs {
			t.Errorf("request %d: %s %q, sent at %d µs for %d", r.RequestID, r.Status, r.ErrorMessage, r.SendTimeUs, r.ArrivalTimeUs)
		}
	}
	if !slices.IsSortedFunc(merged.Records, func(a, b tracev2.Record) int { return int(a.ArrivalTimeUs - b.ArrivalTimeUs) }) {
		t.Error("the merged trace is not in arrival order")
	}
	if !strings.Contains(merged.Header.CreatedAt, start.UTC().Format("2006-01-02T15:04:05")) {
		t.Errorf("merged created_at %q, want the shared start %v", merged.Header.CreatedAt, start.UTC())
	}
}

// TestShardedClosedLoop: two workers of a closed loop (4 users, 40
// requests) each drive their own users; their follow-ups take distinct ids
// and share the request budget, so the merged trace is requests 0..39, each
// user's requests on one worker, one after another.
func TestShardedClosedLoop(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond})
	dir := t.TempDir()
	// Two processes, as on two machines (urfave/cli's package-level flags
	// make two commands in one process race).
	bin := bins.Path(t, "observe")
	start := time.Now().Add(6 * time.Second).UTC().Format(time.RFC3339Nano) // set-up time, with room for a loaded machine
	var cmds []*exec.Cmd
	for i := range 2 {
		cmd := exec.Command(bin, baseArgs(srv, "--no-self-test", "--streaming", "--concurrency", "4", "--think-time", "2ms",
			"--num-requests", "40", "--shard", strconv.Itoa(i)+"/2", "--start-at", start, "-o", filepath.Join(dir, "w"+strconv.Itoa(i)))...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	o := observeIn(testCtx(t), "--merge", "--quiet", "-o", "-", filepath.Join(dir, "w0.csv"), filepath.Join(dir, "w1.csv"))
	if o.Err != nil {
		t.Fatal(o.Stderr)
	}
	merged := loadStream(t, o.Stdout)
	var ids []int64
	users := map[string][]tracev2.Record{}
	for _, r := range merged.Records {
		ids = append(ids, r.RequestID)
		users[r.SessionID] = append(users[r.SessionID], r)
	}
	slices.Sort(ids)
	if len(ids) != 40 || ids[39] != 39 || len(slices.Compact(ids)) != 40 || len(users) != 4 {
		t.Fatalf("%d rows, ids %v, %d users; want ids 0..39 of 4 users", len(merged.Records), ids, len(users))
	}
	for u, rows := range users {
		for k := 1; k < len(rows); k++ {
			if rows[k].ArrivalTimeUs < rows[k-1].LastChunkTimeUs+2000 {
				t.Errorf("%s: a request at %d µs before the previous one's end %d + 2 ms", u, rows[k].ArrivalTimeUs, rows[k-1].LastChunkTimeUs)
			}
		}
	}
}
