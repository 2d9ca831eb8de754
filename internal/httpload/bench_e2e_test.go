package httpload_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"servesim/internal/httpload"
	"servesim/internal/httpload/fakevllm"
)

// stubSender answers at once without a network: it isolates the dispatcher.
type stubSender struct{}

func (stubSender) Prepare(j httpload.Job) httpload.Prepared { return httpload.Prepared{Job: j} }
func (stubSender) Send(_ context.Context, c httpload.Clock, p httpload.Prepared) httpload.Result {
	now := c.Now()
	return httpload.Result{Job: p.Job, SendUS: now, DoneUS: now, Status: httpload.StatusOK}
}

// BenchmarkDispatchLag sends b.N requests at 2,000 req/s (constant
// intervals of 500 µs) and reports the dispatch lag (send − intended)
// percentiles: with a stub sender (the dispatcher alone) and with the HTTP
// client against the fake server (TTFT 1 ms, 4 tokens at ITL 1 ms, streamed).
// Run with -benchtime 4000x (2 s of load per case).
func BenchmarkDispatchLag(b *testing.B) {
	for _, kind := range []string{"stub", "http"} {
		b.Run(kind, func(b *testing.B) {
			var sender httpload.Sender = stubSender{}
			if kind == "http" {
				srv, err := fakevllm.Start(fakevllm.Config{TTFT: time.Millisecond, ITL: time.Millisecond, OutputTokens: 4})
				if err != nil {
					b.Fatal(err)
				}
				defer srv.Close()
				c, err := httpload.NewClient(httpload.Config{BaseURL: srv.URL()})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if _, err := c.Prewarm(context.Background(), 64); err != nil {
					b.Fatal(err)
				}
				sender = c
			}
			n := b.N
			jobs := func(yield func(httpload.Job) bool) {
				for i := range n {
					if !yield(httpload.Job{ID: int64(i), IntendedUS: 10_000 + int64(i)*500, Stream: true, Prompt: "a b", MaxTokens: 4}) {
						return
					}
				}
			}
			d, _ := httpload.NewDispatcher(sender, httpload.DispatchConfig{})
			var lags []int64
			failed := 0
			b.ResetTimer()
			stats, err := d.Run(context.Background(), httpload.NewClock(time.Now()), httpload.Plan{Jobs: jobs}, func(r httpload.Result) {
				lags = append(lags, r.LagUS())
				if r.Status != httpload.StatusOK {
					failed++
				}
			})
			b.StopTimer()
			if err != nil || failed > 0 {
				b.Fatalf("error %v, %d failed", err, failed)
			}
			b.ReportMetric(float64(quantile(lags, 0.5)), "lag-p50-µs")
			b.ReportMetric(float64(quantile(lags, 0.99)), "lag-p99-µs")
			b.ReportMetric(float64(stats.MaxLagUS), "lag-max-µs")
			b.ReportMetric(float64(stats.Late)/float64(n)*100, "late-%")
		})
	}
}

// BenchmarkTTFTAt1000Streams runs 1,000 concurrent streams against the fake
// server with TTFT 50 ms and ITL 10 ms (8 tokens each, so a stream lasts
// 120 ms; sends 100 µs apart, so all 1,000 are in flight together) per
// iteration, and reports the TTFT error — measured (first token −
// send) minus 50 ms — at p50 and p99, and the client's read lag behind the
// server's flush of the same chunk (the client's own share of the error).
// Run with -benchtime 3x.
func BenchmarkTTFTAt1000Streams(b *testing.B) {
	const streams = 1000
	ttft, itl := 50*time.Millisecond, 10*time.Millisecond
	srv, err := fakevllm.Start(fakevllm.Config{TTFT: ttft, ITL: itl, OutputTokens: 8, RecordTimings: true, KeepRequests: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c, err := httpload.NewClient(httpload.Config{BaseURL: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if n, err := c.Prewarm(context.Background(), streams); err != nil || n != streams {
		b.Fatalf("prewarm: %d, %v", n, err)
	}
	var ttftErr, firstLag, lags []int64
	b.ResetTimer()
	for it := range b.N {
		jobs := func(yield func(httpload.Job) bool) {
			for i := range streams {
				j := httpload.Job{ID: int64(i), IntendedUS: 5000 + int64(i)*100, Chat: true, Stream: true, Prompt: "a b c",
					MaxTokens: 8, RequestID: fmt.Sprintf("%d-%d", it, i)}
				if !yield(j) {
					return
				}
			}
		}
		clock := httpload.NewClock(time.Now())
		d, _ := httpload.NewDispatcher(c, httpload.DispatchConfig{})
		_, err := d.Run(context.Background(), clock, httpload.Plan{Jobs: jobs}, func(r httpload.Result) {
			if r.Status != httpload.StatusOK {
				b.Errorf("job %d: %s %s", r.Job.ID, r.Status, r.Error)
				return
			}
			ttftErr = append(ttftErr, r.FirstTokenUS-r.SendUS-ttft.Microseconds())
			lags = append(lags, r.LagUS())
			if truth, ok := srv.Timing(r.Job.RequestID); ok && len(truth.Chunks) > 1 {
				firstLag = append(firstLag, r.FirstTokenUS-clock.Stamp(truth.Chunks[1]))
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(srv.Stats().MaxInFlight), "max-concurrent-streams")
	b.ReportMetric(float64(quantile(ttftErr, 0.5)), "ttft-err-p50-µs")
	b.ReportMetric(float64(quantile(ttftErr, 0.99)), "ttft-err-p99-µs")
	b.ReportMetric(float64(quantile(firstLag, 0.5)), "read-lag-p50-µs")
	b.ReportMetric(float64(quantile(firstLag, 0.99)), "read-lag-p99-µs")
	b.ReportMetric(float64(quantile(lags, 0.99)), "dispatch-lag-p99-µs")
}
