package main

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/live"
	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2"
)

// repeatSummary reads the JSON summary of a repeated run that succeeded.
func repeatSummary(t *testing.T, path string) *live.RepeatSummary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s live.RepeatSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &s
}

// metricOf is the named metric of a server's summary.
func metricOf(t *testing.T, st live.RepeatServerStats, name string) live.RepeatStat {
	t.Helper()
	for _, m := range st.Metrics {
		if m.Metric == name {
			return m
		}
	}
	t.Fatalf("no metric %q in the summary", name)
	return live.RepeatStat{}
}

// traceMeanTTFT is the mean TTFT (ms) of a trace's successful rows: first
// token − send, as the end summary defines it.
func traceMeanTTFT(tr *tracev2.Trace) float64 {
	sum, n := 0.0, 0
	for _, r := range tr.Records {
		if r.Status != "ok" {
			continue
		}
		first := r.FirstTokenTimeUs
		if first == 0 {
			first = r.FirstChunkTimeUs
		}
		sum += float64(first-r.SendTimeUs) / 1000
		n++
	}
	return sum / float64(n)
}

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

// TestRepeatThreeRuns: --repeat 3 writes three whole traces PREFIX.r1..r3,
// each saying which run it is; each run prints its own end summary, and
// the repeats' summary holds each run's value (its trace's own mean TTFT;
// its own summary's figure), their mean, the 95% interval mean ±
// t(0.975, 2)·SD/√3 with t = 4.302653, and CV = SD/mean.
func TestRepeatThreeRuns(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond})
	prefix := filepath.Join(t.TempDir(), "rep")
	o := observeIn(testCtx(t), baseArgs(srv, "--no-self-test", "--streaming", "-n", "20", "--rate", "200", "--repeat", "3", "-o", prefix)...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	sum := repeatSummary(t, prefix+".repeat.json")
	if len(sum.Servers) != 1 || len(sum.Servers[0].Runs) != 3 || sum.Repeats != 3 || sum.Interrupted {
		t.Fatalf("summary %+v, want one server with 3 whole runs", sum)
	}
	st := sum.Servers[0]
	ttft := metricOf(t, st, "ttft_mean_ms")
	if len(ttft.Values) != 3 {
		t.Fatalf("ttft_mean_ms values %v, want 3", ttft.Values)
	}
	// The runs' own summaries on stderr, in run order.
	own := regexp.MustCompile(`Mean TTFT \(ms\):\s+([0-9.]+)`).FindAllStringSubmatch(o.Stderr, -1)
	if len(own) != 3 {
		t.Fatalf("%d end summaries on stderr, want one per run:\n%s", len(own), o.Stderr)
	}
	for i := 1; i <= 3; i++ {
		tr := loadFiles(t, prefix+".r"+strconv.Itoa(i))
		if len(tr.Records) != 20 {
			t.Errorf("run %d: %d rows, want 20", i, len(tr.Records))
		}
		if c := tr.Header.XExt.Client; c == nil || c.Repeat != i || c.Repeats != 3 || c.Server != "" {
			t.Errorf("run %d: header client %+v, want repeat %d of 3", i, c, i)
		}
		if st.Runs[i-1].Repeat != i || st.Runs[i-1].Trace != prefix+".r"+strconv.Itoa(i) {
			t.Errorf("summary run %d: %+v", i, st.Runs[i-1])
		}
		if got, want := ttft.Values[i-1], traceMeanTTFT(tr); !near(got, want, 1e-9) {
			t.Errorf("run %d: summary's mean TTFT %.6f ms, the trace's %.6f ms", i, got, want)
		}
		if got := strconv.FormatFloat(ttft.Values[i-1], 'f', 2, 64); got != own[i-1][1] {
			t.Errorf("run %d: summary's mean TTFT %s ms, the run's own summary %s ms", i, got, own[i-1][1])
		}
	}
	for _, m := range st.Metrics {
		if len(m.Values) != 3 {
			continue
		}
		mean := (m.Values[0] + m.Values[1] + m.Values[2]) / 3
		ss := 0.0
		for _, v := range m.Values {
			ss += (v - mean) * (v - mean)
		}
		sd := math.Sqrt(ss / 2)
		half := 4.302653 * sd / math.Sqrt(3)
		if !near(m.Mean, mean, 1e-12) || !near(m.SD, sd, 1e-9) || math.Abs(m.CILo-(mean-half)) > 1e-6*(1+mean) ||
			math.Abs(m.CIHi-(mean+half)) > 1e-6*(1+mean) {
			t.Errorf("%s: mean %g, SD %g, CI %g–%g; want %g, %g, %g–%g", m.Metric, m.Mean, m.SD, m.CILo, m.CIHi, mean, sd, mean-half, mean+half)
		}
		cv := sd / mean
		if mean == 0 && sd == 0 {
			cv = 0 // every run measured exactly 0 (the fake's ITL below the clock's grain)
		}
		if m.CV == nil || !near(*m.CV, cv, 1e-9) || m.Enough != (half <= 0.05*mean) {
			t.Errorf("%s: CV %v, enough %v; want %g, %v", m.Metric, m.CV, m.Enough, cv, half <= 0.05*mean)
		}
	}
	if tpot := metricOf(t, st, "tpot_p99_ms"); len(tpot.Values) != 3 {
		t.Errorf("tpot_p99_ms has %d values, want 3 (every request streamed)", len(tpot.Values))
	}
	if !regexp.MustCompile(`N = 3 was (not )?enough`).MatchString(o.Stderr) {
		t.Errorf("no verdict on N in the summary:\n%s", o.Stderr)
	}
}

// TestRepeatInterleavesTwoServers: --url-b runs A B A B, each trace
// naming its server (x_ext.client.server, x_ext.server_info.url); its t0
// says the order. Server B is three times slower to its first token, and
// the summary says so.
func TestRepeatInterleavesTwoServers(t *testing.T) {
	a := startFake(t, fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond})
	b := startFake(t, fakevllm.Config{TTFT: 30 * time.Millisecond, ITL: time.Millisecond})
	prefix := filepath.Join(t.TempDir(), "ab")
	o := observeIn(testCtx(t), baseArgs(a, "--no-self-test", "--streaming", "-n", "10", "--rate", "100", "--repeat", "2",
		"--url-b", b.URL(), "-o", prefix)...)
	if o.Err != nil {
		t.Fatalf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	var last int64
	for _, run := range []struct {
		name, server, url string
		i                 int
	}{{"a.r1", "a", a.URL(), 1}, {"b.r1", "b", b.URL(), 1}, {"a.r2", "a", a.URL(), 2}, {"b.r2", "b", b.URL(), 2}} {
		tr := loadFiles(t, prefix+"."+run.name)
		x := tr.Header.XExt
		if x.Client == nil || x.Client.Server != run.server || x.Client.Repeat != run.i || x.ServerInfo == nil || x.ServerInfo.URL != run.url {
			t.Errorf("%s: client %+v, server_info %+v; want server %s (%s), repeat %d", run.name, x.Client, x.ServerInfo, run.server, run.url, run.i)
		}
		if x.T0UnixUs <= last {
			t.Errorf("%s started at %d, not after the run before it (%d): want A B A B", run.name, x.T0UnixUs, last)
		}
		last = x.T0UnixUs
	}
	if sa, sb := a.Stats().Requests, b.Stats().Requests; sa != 20 || sb != 20 {
		t.Errorf("server A saw %d requests, B %d; want 20 each", sa, sb)
	}
	sum := repeatSummary(t, prefix+".repeat.json")
	if len(sum.Servers) != 2 || sum.Servers[0].Server != "a" || sum.Servers[1].Server != "b" {
		t.Fatalf("summary servers %+v, want a and b", sum.Servers)
	}
	ma, mb := metricOf(t, sum.Servers[0], "ttft_mean_ms"), metricOf(t, sum.Servers[1], "ttft_mean_ms")
	// Every run of B is slower than every run of A. (Their intervals, at
	// N = 2 with Student's t of one degree of freedom, 12.7, are as wide
	// as one busy moment of the host makes them; TestRepeatThreeRuns
	// checks how they are computed.)
	if len(ma.Values) != 2 || len(mb.Values) != 2 || !(mb.Mean > 3*ma.Mean) || slices.Min(mb.Values) <= slices.Max(ma.Values) {
		t.Errorf("mean TTFT A %s %v, B %s %v; want every run of B slower than every run of A", ma.Text("%.2f"), ma.Values, mb.Text("%.2f"), mb.Values)
	}
}

// TestRepeatBadValues: a --repeat that is not a whole number from 1 to
// 100, or flags that cannot go with it, exit 2 before any request.
func TestRepeatBadValues(t *testing.T) {
	srv := startFake(t, fakevllm.Config{})
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--repeat", "0"}, {"--repeat", "-1"}, {"--repeat", "1.5"}, {"--repeat", "101"}, {"--repeat", "99999999999999999999"},
		{"--repeat", "x"}, {"--repeat", "3", "-o", "-"}, {"--url-b", "ftp://x", "-o", filepath.Join(dir, "p")},
		{"--repeat", "2", "--sweep", "-o", filepath.Join(dir, "p")}, {"--repeat-output", filepath.Join(dir, "s.json"), "-o", filepath.Join(dir, "p")},
		{"--repeat", "2", "--itl-output", filepath.Join(dir, "i.csv"), "--record-itl", "-o", filepath.Join(dir, "p")},
	} {
		o := observeIn(testCtx(t), baseArgs(srv, append([]string{"--no-self-test", "-n", "2"}, args...)...)...)
		if o.Code != 2 {
			t.Errorf("%v: exit %d (%v), want 2", args, o.Code, o.Err)
		}
	}
	if n := srv.Stats().Requests; n != 0 {
		t.Errorf("the server saw %d requests, want none", n)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("files written: %v", files)
	}
}

// TestRepeatInterruptKeepsWholeRuns: an interrupt during the second of
// three runs keeps the first whole, writes the second's trace marked
// interrupted, starts no third, and summarises the whole run only; exit 130.
func TestRepeatInterruptKeepsWholeRuns(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: time.Millisecond})
	prefix := filepath.Join(t.TempDir(), "int")
	base := testCtx(t)
	ctx, cancel := context.WithCancelCause(base)
	defer cancel(nil)
	done := make(chan clitest.Result, 1)
	go func() {
		done <- observeIn(ctx, baseArgs(srv, "--no-self-test", "--streaming", "-n", "10", "--rate", "1000", "--output-tokens", "400",
			"--drain-timeout", "0s", "--repeat", "3", "-o", prefix)...)
	}()
	if err := srv.WaitFor(base, func(s fakevllm.Stats) bool { return s.Requests >= 12 }); err != nil {
		t.Fatal(err)
	}
	cancel(errors.New("interrupted by interrupt"))
	o := <-done
	if o.Code != 130 {
		t.Fatalf("exit %d (%v), want 130\n%s", o.Code, o.Err, o.Stderr)
	}
	whole := loadFiles(t, prefix+".r1")
	if x := whole.Header.XExt; x.Interrupted == nil || *x.Interrupted || len(whole.Records) != 10 {
		t.Errorf("run 1: interrupted %v, %d rows; want a whole run of 10", x.Interrupted, len(whole.Records))
	}
	cut := loadFiles(t, prefix+".r2")
	if x := cut.Header.XExt; x.Interrupted == nil || !*x.Interrupted {
		t.Errorf("run 2: x_ext.interrupted %v, want true", x.Interrupted)
	}
	if _, err := os.Stat(prefix + ".r3.csv"); !os.IsNotExist(err) {
		t.Errorf("a third run was started: %v", err)
	}
	sum := repeatSummary(t, prefix+".repeat.json")
	if !sum.Interrupted || len(sum.Servers[0].Runs) != 1 || sum.Servers[0].Runs[0].Repeat != 1 {
		t.Errorf("summary interrupted %v, runs %+v; want the whole run 1 only", sum.Interrupted, sum.Servers[0].Runs)
	}
	if m := metricOf(t, sum.Servers[0], "ttft_mean_ms"); len(m.Values) != 1 || !near(m.Values[0], traceMeanTTFT(whole), 1e-9) {
		t.Errorf("summary's mean TTFT %v, want run 1's %.4f only", m.Values, traceMeanTTFT(whole))
	}
}
