package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/testkit/timingtest"
	"servesim/internal/tracev2"
)

// accuracy is what one run of the command measured against the fake
// server's ground truth, all in µs.
type accuracy struct {
	ttftErr    []int64 // (ext_first_token − send) − configured TTFT
	readLag    []int64 // ext_first_token − the instant the server flushed the first token
	serverLate []int64 // the server's flush − its schedule, for the first token
	delivery   []int64 // the server's admission − send
	maxStreams int
	rows       int
}

func (a accuracy) String() string {
	q := func(xs []int64) string {
		return fmt.Sprintf("p50 %d µs p99 %d µs", quantile64(xs, 0.5), quantile64(xs, 0.99))
	}
	return fmt.Sprintf("%d rows, %d streams at once at most; TTFT error %s; client read lag %s; request delivery %s; server's own lateness %s",
		a.rows, a.maxStreams, q(a.ttftErr), q(a.readLag), q(a.delivery), q(a.serverLate))
}

// measureCommand runs observe against a fake server with the given timing,
// open loop at the constant rate that keeps streams requests in flight
// (streams / request duration; a closed loop would send in bursts of
// streams requests at once), and compares the trace with the server's
// record of when it flushed each chunk.
func measureCommand(ctx context.Context, streams, requests, tokens int, ttft, itl time.Duration) (accuracy, error) {
	return measureWith(ctx, inProcess, streams, requests, tokens, ttft, itl)
}

// runner runs the command with args and returns its stdout.
type runner func(ctx context.Context, args []string) (string, error)

func inProcess(ctx context.Context, args []string) (string, error) {
	o := observeIn(ctx, args...)
	if o.Err != nil {
		return "", fmt.Errorf("exit %d: %v\n%s", o.Code, o.Err, o.Stderr)
	}
	return o.Stdout, nil
}

// asBinary runs the built observe binary (its own process, with main's GC
// setting), so client and server share only the machine.
func asBinary(bin string) runner {
	return func(ctx context.Context, args []string) (string, error) {
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("%v\n%s", err, errb.String())
		}
		return out.String(), nil
	}
}

func measureWith(ctx context.Context, run runner, streams, requests, tokens int, ttft, itl time.Duration) (accuracy, error) {
	srv, err := fakevllm.Start(fakevllm.Config{TTFT: ttft, ITL: itl, RecordTimings: true, KeepRequests: 1})
	if err != nil {
		return accuracy{}, err
	}
	defer srv.Close()
	rate := float64(streams) / (ttft + time.Duration(tokens-1)*itl).Seconds()
	stdout, err := run(ctx, []string{"--url", srv.URL(), "--quiet", "--no-self-test", "--chat", "--streaming",
		"--rate", strconv.FormatFloat(rate, 'f', 3, 64), "--prewarm", strconv.Itoa(streams), "--num-requests", strconv.Itoa(requests),
		"--prompt-tokens", "8", "--prompt-tokens-stdev", "0",
		"--output-tokens", strconv.Itoa(tokens), "--output-tokens-stdev", "0"})
	if err != nil {
		return accuracy{}, err
	}
	tr, err := tracev2.Load(tracev2.Input{Path: "-", Stdin: stringsReader(stdout)}, tracev2.Options{})
	if err != nil {
		return accuracy{}, err
	}
	t0 := tr.Header.XExt.T0UnixUs
	a := accuracy{maxStreams: srv.Stats().MaxInFlight, rows: len(tr.Records)}
	for _, r := range tr.Records {
		if r.Status != "ok" {
			return a, fmt.Errorf("row %d: %s %q", r.RequestID, r.Status, r.ErrorMessage)
		}
		a.ttftErr = append(a.ttftErr, r.FirstTokenTimeUs-r.SendTimeUs-ttft.Microseconds())
		truth, ok := srv.Timing(r.XRequestID)
		if !ok || len(truth.Chunks) < 2 {
			return a, fmt.Errorf("row %d: no server timing for %s", r.RequestID, r.XRequestID)
		}
		// Chunk 0 is the role chunk, flushed with chunk 1, the first token.
		a.readLag = append(a.readLag, r.FirstTokenTimeUs-(truth.Chunks[1].UnixMicro()-t0))
		a.serverLate = append(a.serverLate, truth.Chunks[1].Sub(truth.Due[1]).Microseconds())
		a.delivery = append(a.delivery, truth.Admitted.UnixMicro()-t0-r.SendTimeUs)
	}
	return a, nil
}

// TestTTFTMatchesGroundTruth: 100 streams at once (1,333 req/s, open loop)
// through the whole command against a server with TTFT 30 ms and ITL 5 ms.
// The median of the trace's TTFT (ext_first_token − send) is within 1 ms of
// the configured TTFT, and the client's first-token stamps within 1 ms of
// the instants the server flushed them (same process, same clock). The
// machine's load is judged from the server's own lateness and request
// pick-up, as in httpload's timing tests.
func TestTTFTMatchesGroundTruth(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as main does
	timingtest.Assert(t, func(int) (string, bool, bool) {
		a, err := measureCommand(testCtx(t), 100, 400, 10, 30*time.Millisecond, 5*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		ok := a.rows == 400 && a.maxStreams >= 90 && abs64(quantile64(a.ttftErr, 0.5)) <= 1000 && abs64(quantile64(a.readLag, 0.5)) <= 1000
		loaded := quantile64(a.serverLate, 0.5) > 500 || quantile64(a.delivery, 0.5) > 1000
		return a.String(), ok, loaded
	})
}

// BenchmarkCommandTTFT runs the whole command per iteration, in-process and
// as the built binary, with N streams in flight (open loop at N / 280 ms)
// against the fake server with TTFT
// 50 ms and ITL 10 ms, 24 tokens per answer, 10·N requests, and reports the
// TTFT error of the written trace and the client's read lag behind the
// server's flush of the first token. Run with -benchtime 1x; the fake
// server shares the process and the two cores, so its own lateness is
// reported too.
func BenchmarkCommandTTFT(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	bin := bins.Path(b, "observe")
	for _, tc := range []struct {
		how     string
		run     runner
		streams int
	}{{"in-process", inProcess, 100}, {"binary", asBinary(bin), 100}, {"binary", asBinary(bin), 300}} {
		b.Run(fmt.Sprintf("%s/streams=%d", tc.how, tc.streams), func(b *testing.B) {
			streams := tc.streams
			var all accuracy
			for range b.N {
				a, err := measureWith(context.Background(), tc.run, streams, 10*streams, 24, 50*time.Millisecond, 10*time.Millisecond)
				if err != nil {
					b.Fatal(err)
				}
				all.ttftErr = append(all.ttftErr, a.ttftErr...)
				all.readLag = append(all.readLag, a.readLag...)
				all.serverLate = append(all.serverLate, a.serverLate...)
				all.delivery = append(all.delivery, a.delivery...)
				all.maxStreams = max(all.maxStreams, a.maxStreams)
			}
			b.ReportMetric(float64(all.maxStreams), "max-concurrent")
			b.ReportMetric(float64(quantile64(all.ttftErr, 0.5)), "ttft-err-p50-µs")
			b.ReportMetric(float64(quantile64(all.ttftErr, 0.99)), "ttft-err-p99-µs")
			b.ReportMetric(float64(quantile64(all.readLag, 0.5)), "read-lag-p50-µs")
			b.ReportMetric(float64(quantile64(all.readLag, 0.99)), "read-lag-p99-µs")
			b.ReportMetric(float64(quantile64(all.delivery, 0.5)), "delivery-p50-µs")
			b.ReportMetric(float64(quantile64(all.serverLate, 0.99)), "server-late-p99-µs")
		})
	}
}
