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

// BenchmarkTTFTAt1000Streams runs N concurrent streams against the fake
// server with TTFT 50 ms and ITL 10 ms per iteration (sends 200 µs apart,
// 24 tokens each, so a stream lasts 280 ms and up to 1,000 overlap), and
// reports the TTFT error — measured (first token − send) minus 50 ms — at
// p50 and p99, and the client's read lag behind the server's flush of the
// first token (the client's own share of the error), the request delivery
// (send → server admission) and the server's own lateness. The server runs
// in the same process: at 1,000 streams of 24 tokens (100k chunks/s) client
// and server together need more than two cores, and the figures then
// measure CPU queueing. Run with -benchtime 3x; GOGC=400 removes most of the
// p99 (GC pauses of 1–3 ms on this VM).
func BenchmarkTTFTAt1000Streams(b *testing.B) {
	for _, streams := range []int{100, 300, 1000} {
		b.Run(fmt.Sprintf("streams=%d", streams), func(b *testing.B) { benchTTFT(b, streams) })
	}
}

func benchTTFT(b *testing.B, streams int) {
	ttft, itl := 50*time.Millisecond, 10*time.Millisecond
	srv, err := fakevllm.Start(fakevllm.Config{TTFT: ttft, ITL: itl, OutputTokens: 24, RecordTimings: true, KeepRequests: 1})
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
	var ttftErr, firstLag, lags, delivery, serverLate []int64
	b.ResetTimer()
	for it := range b.N {
		jobs := func(yield func(httpload.Job) bool) {
			for i := range streams {
				j := httpload.Job{ID: int64(i), IntendedUS: 5000 + int64(i)*200, Chat: true, Stream: true, Prompt: "a b c",
					RequestID: fmt.Sprintf("%d-%d", it, i)}
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
				delivery = append(delivery, clock.Stamp(truth.Admitted)-r.SendUS)
				serverLate = append(serverLate, truth.Chunks[1].Sub(truth.Due[1]).Microseconds())
			}
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(srv.Stats().MaxInFlight), "max-concurrent")
	b.ReportMetric(float64(quantile(ttftErr, 0.5)), "ttft-err-p50-µs")
	b.ReportMetric(float64(quantile(ttftErr, 0.99)), "ttft-err-p99-µs")
	b.ReportMetric(float64(quantile(firstLag, 0.5)), "read-lag-p50-µs")
	b.ReportMetric(float64(quantile(firstLag, 0.99)), "read-lag-p99-µs")
	b.ReportMetric(float64(quantile(lags, 0.99)), "dispatch-lag-p99-µs")
	b.ReportMetric(float64(quantile(delivery, 0.5)), "delivery-p50-µs")
	b.ReportMetric(float64(quantile(delivery, 0.99)), "delivery-p99-µs")
	b.ReportMetric(float64(quantile(serverLate, 0.5)), "server-late-p50-µs")
	b.ReportMetric(float64(quantile(serverLate, 0.99)), "server-late-p99-µs")
}
