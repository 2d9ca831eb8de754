package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/tracev2"
)

// startBinary starts the built observe against srv with a long open-loop
// run (5,000 requests at 200/s) and extra flags.
func startBinary(t *testing.T, srv *fakevllm.Server, stdout io.Writer, extra ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	bin := bins.Path(t, "observe")
	args := append([]string{"--url", srv.URL(), "--quiet", "--no-self-test", "--streaming", "--rate", "200",
		"--num-requests", "5000", "--prompt-tokens", "8", "--prompt-tokens-stdev", "0"}, extra...)
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, &stderr
}

// lineWatcher copies a child's stderr and closes seen when a line contains
// want.
type lineWatcher struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// exitCode waits for cmd and returns its exit status (-1 when killed).
func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
}

// TestKillMidRunLeavesReadableRows: SIGKILL, with no chance to flush or
// write a trailer, leaves a two-file trace whose header and every row
// load, and an ITL file of whole requests.
func TestKillMidRunLeavesReadableRows(t *testing.T) {
	srv := startFake(t, fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: 2 * time.Millisecond})
	prefix := filepath.Join(t.TempDir(), "cap")
	cmd, stderr := startBinary(t, srv, io.Discard, "--output-tokens", "20", "--output-tokens-stdev", "0",
		"--trace-output", prefix, "--record-itl")
	if err := srv.WaitFor(testCtx(t), func(s fakevllm.Stats) bool { return s.Completed >= 60 }); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd); code != -1 {
		t.Errorf("exit %d after SIGKILL\n%s", code, stderr)
	}
	tr := loadFiles(t, prefix)
	if len(tr.Records) == 0 || tr.Header.Mode != "real" {
		t.Fatalf("%d rows, mode %q", len(tr.Records), tr.Header.Mode)
	}
	for _, r := range tr.Records {
		if r.Status != "ok" || r.OutputTokens != 20 {
			t.Errorf("row %d: %s %q, %d tokens", r.RequestID, r.Status, r.ErrorMessage, r.OutputTokens)
		}
	}
	itl, err := tracev2.ReadITL(mustOpen(t, prefix+".itl.csv"), "itl", tracev2.Origin{})
	if err != nil {
		t.Fatalf("ITL after SIGKILL: %v", err)
	}
	chunks := map[int64]int{}
	for _, r := range tr.Records {
		chunks[r.RequestID] = r.NumChunks
	}
	perReq := map[int64]int{}
	for _, row := range itl {
		perReq[row.RequestID]++
	}
	for id, n := range perReq {
		if n != chunks[id] {
			t.Errorf("request %d: %d ITL rows, want its num_chunks %d (whole requests only)", id, n, chunks[id])
		}
	}
	t.Logf("after SIGKILL: %d rows load, %d ITL rows", len(tr.Records), len(itl))
}

// TestSIGINTThroughTheBinary: the real signal path. The first SIGINT
// drains and exits 130 with the trailer; with a one-minute drain, a second
// SIGINT ends the run at once, still with the trailer.
func TestSIGINTThroughTheBinary(t *testing.T) {
	for _, tc := range []struct {
		name    string
		signals int
		want    string
	}{{"one", 1, "still in flight after the 200ms drain"}, {"two", 2, "aborted"}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startFake(t, fakevllm.Config{TTFT: 2 * time.Millisecond, ITL: 5 * time.Millisecond})
			drain := "200ms"
			if tc.signals == 2 {
				drain = "1m"
			}
			var out bytes.Buffer
			bin := bins.Path(t, "observe")
			cmd := exec.Command(bin, "--url", srv.URL(), "--no-self-test", "--streaming", "--rate", "200",
				"--num-requests", "5000", "--prompt-tokens", "8", "--prompt-tokens-stdev", "0",
				"--output-tokens", "400", "--drain-timeout", drain)
			stderr := &lineWatcher{want: "interrupted: no new requests", seen: make(chan struct{})}
			cmd.Stdout, cmd.Stderr = &out, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			if err := srv.WaitFor(testCtx(t), func(s fakevllm.Stats) bool { return s.Requests >= 20 }); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			if tc.signals == 2 {
				select {
				case <-stderr.seen: // the first interrupt is being handled
				case <-testCtx(t).Done():
					t.Fatalf("no drain message after the first interrupt:\n%s", stderr)
				}
				if err := cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
			}
			if code := exitCode(t, cmd); code != 130 {
				t.Fatalf("exit %d, want 130\n%s", code, stderr)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v to exit", took)
			}
			tr := loadStream(t, out.String())
			if x := tr.Header.XExt; x == nil || x.Interrupted == nil || !*x.Interrupted {
				t.Errorf("x_ext: %+v", tr.Header.XExt)
			}
			cancelled := 0
			for _, r := range tr.Records {
				if strings.HasPrefix(r.ErrorMessage, "cancelled: ") && strings.Contains(r.ErrorMessage, tc.want) {
					cancelled++
				}
			}
			if cancelled == 0 {
				t.Errorf("no row says %q", tc.want)
			}
			if len(tr.Records) < int(srv.Stats().Requests) {
				t.Errorf("%d rows for %d requests the server saw", len(tr.Records), srv.Stats().Requests)
			}
		})
	}
}

// TestPipelineObserveReplayCalibrate: observe -o - | replay - as one
// pipeline (the trace teed to a file, as in the --help example), then
// calibrate the captured trace against replay's SimResults.
func TestPipelineObserveReplayCalibrate(t *testing.T) {
	observe, replay, calibrate := bins.Path(t, "observe"), bins.Path(t, "replay"), bins.Path(t, "calibrate")
	srv := startFake(t, fakevllm.Config{TTFT: 20 * time.Millisecond, ITL: 4 * time.Millisecond})
	dir := t.TempDir()
	obs := exec.Command(observe, "--url", srv.URL(), "--quiet", "--streaming", "--chat",
		"--workload", "chatbot", "--rate", "50", "--num-requests", "40", "--output-tokens-max", "64",
		"--prompt-tokens-max", "256", "--self-test-streams", "10", "-o", "-")
	rep := exec.Command(replay, "-", "--quiet", "--model", "qwen3-14b") // the fake server serves fake-model, which no config describes
	pr, pw := io.Pipe()
	var trace, sim, obsErr, repErr bytes.Buffer
	obs.Stdout, obs.Stderr = io.MultiWriter(pw, &trace), &obsErr
	rep.Stdin, rep.Stdout, rep.Stderr = pr, &sim, &repErr
	if err := rep.Start(); err != nil {
		t.Fatal(err)
	}
	if err := obs.Run(); err != nil {
		pw.Close()
		t.Fatalf("observe: %v\n%s", err, obsErr.String())
	}
	pw.Close()
	if err := rep.Wait(); err != nil {
		t.Fatalf("replay: %v\n%s", err, repErr.String())
	}
	capPath, simPath := filepath.Join(dir, "cap.trace"), filepath.Join(dir, "sim.json")
	writeFile(t, capPath, trace.String())
	writeFile(t, simPath, sim.String())
	out, err := exec.Command(calibrate, capPath, simPath, "--format", "json", "--quiet").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("calibrate: %v\n%s", err, ee.Stderr)
		}
		t.Fatal(err)
	}
	var rep2 struct {
		TraceInfo struct {
			NumRequests  int `json:"num_requests"`
			MatchedPairs int `json:"matched_pairs"`
		} `json:"trace_info"`
		Metrics map[string]struct {
			RequestLevel struct {
				Quality string `json:"quality"`
			} `json:"request_level"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(out, &rep2); err != nil {
		t.Fatalf("calibrate JSON: %v\n%s", err, head(string(out), 500))
	}
	if rep2.TraceInfo.NumRequests != 40 || rep2.TraceInfo.MatchedPairs < 35 {
		t.Errorf("trace_info: %+v", rep2.TraceInfo)
	}
	for _, m := range []string{"ttft", "e2e"} {
		if q := rep2.Metrics[m].RequestLevel.Quality; q == "" {
			t.Errorf("%s has no grade", m)
		}
	}
	t.Logf("observe | replay | calibrate: %d requests, %d matched, TTFT grade %s, E2E grade %s", rep2.TraceInfo.NumRequests,
		rep2.TraceInfo.MatchedPairs, rep2.Metrics["ttft"].RequestLevel.Quality, rep2.Metrics["e2e"].RequestLevel.Quality)
}
