package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/testkit/timingtest"
	"servesim/internal/tracev2"
)

// lateness is what a played trace's capture says about send times, in µs.
type lateness struct {
	lag        []int64 // send − scheduled offset, every row
	serverLate []int64 // the fake server's own lateness on the first token
	rows, ok   int
}

func (l lateness) String() string {
	return fmt.Sprintf("%d rows (%d ok); send lag p50 %d µs, p99 %d µs, p99.9 %d µs, max %d µs; server's own lateness p50 %d µs",
		l.rows, l.ok, quantile64(l.lag, 0.5), quantile64(l.lag, 0.99), quantile64(l.lag, 0.999), quantile64(l.lag, 1),
		quantile64(l.serverLate, 0.5))
}

// evenTrace is n rows one period apart, 8 prompt and 2 output tokens each.
func evenTrace(tb testing.TB, n int, period time.Duration) (string, []tracev2.Record) {
	recs := make([]tracev2.Record, n)
	for i := range recs {
		recs[i] = tracev2.Record{RequestID: int64(i), InputTokens: 8, OutputTokens: 2, Streaming: true,
			ArrivalTimeUs: int64(i) * period.Microseconds(), Status: "ok"}
	}
	return writeTrace(tb, recs, false), recs
}

// measurePlay plays the trace against a fake server (TTFT and ITL 1 ms) and
// compares each row's send time with its scheduled offset.
func measurePlay(ctx context.Context, trace string, want []tracev2.Record) (lateness, error) {
	srv, err := fakevllm.Start(fakevllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond, RecordTimings: true, KeepRequests: 1})
	if err != nil {
		return lateness{}, err
	}
	defer srv.Close()
	stdout, err := inProcess(ctx, []string{"--url", srv.URL(), "--quiet", "--no-self-test", "--prewarm", "16", "--trace", trace})
	if err != nil {
		return lateness{}, err
	}
	tr, err := tracev2.Load(tracev2.Input{Path: "-", Stdin: stringsReader(stdout)}, tracev2.Options{})
	if err != nil {
		return lateness{}, err
	}
	l := lateness{rows: len(tr.Records)}
	for _, r := range tr.Records {
		if r.ArrivalTimeUs != want[r.RequestID].ArrivalTimeUs {
			return l, fmt.Errorf("row %d scheduled at %d µs, want %d", r.RequestID, r.ArrivalTimeUs, want[r.RequestID].ArrivalTimeUs)
		}
		l.lag = append(l.lag, r.SendTimeUs-r.ArrivalTimeUs)
		if r.Status != "ok" {
			continue
		}
		l.ok++
		if truth, ok := srv.Timing(r.XRequestID); ok && len(truth.Chunks) > 1 {
			l.serverLate = append(l.serverLate, truth.Chunks[1].Sub(truth.Due[1]).Microseconds())
		}
	}
	return l, nil
}

// TestPlayOnTime plays 2,000 rows at 1,000 requests/s against the
// in-process fake server: 99% of the rows are sent within 1 ms of their
// scheduled offset (measured: p99 0.2-0.26 ms). The tail is logged and
// BenchmarkPlayLateness reports it: with the client and the server in one
// process on two cores, a scheduler quantum or a GC pause puts a handful of
// rows 1-4 ms late even on an idle machine (three attempts at load 1 had
// maxima of 2.3, 4.3 and 1.2 ms), so a bound on the maximum failed on
// healthy code; the other timing tests bound medians for the same reason.
// The machine's load is judged from the fake server's own lateness.
func TestPlayOnTime(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(400)) // as main does
	trace, recs := evenTrace(t, 2000, time.Millisecond)
	timingtest.Assert(t, func(int) (string, bool, bool) {
		l, err := measurePlay(testCtx(t), trace, recs)
		if err != nil {
			t.Fatal(err)
		}
		ok := l.rows == len(recs) && l.ok == l.rows && quantile64(l.lag, 0.99) <= 1000
		return l.String(), ok, quantile64(l.serverLate, 0.5) > 500
	})
}

// BenchmarkPlayLateness plays 5,000 rows at 1,000 requests/s per iteration
// and reports the distribution of send lateness (send − scheduled offset).
// Run with -benchtime 1x.
func BenchmarkPlayLateness(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	trace, recs := evenTrace(b, 5000, time.Millisecond)
	var all lateness
	for range b.N {
		l, err := measurePlay(context.Background(), trace, recs)
		if err != nil {
			b.Fatal(err)
		}
		all.lag = append(all.lag, l.lag...)
		all.serverLate = append(all.serverLate, l.serverLate...)
	}
	for _, q := range []struct {
		name string
		q    float64
	}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}, {"max", 1}} {
		b.ReportMetric(float64(quantile64(all.lag, q.q)), "lag-"+q.name+"-µs")
	}
	late := 0
	for _, v := range all.lag {
		if v > 1000 {
			late++
		}
	}
	b.ReportMetric(float64(late), "rows-over-1ms")
	b.ReportMetric(float64(quantile64(all.serverLate, 0.5)), "server-late-p50-µs")
}
