package live

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"servesim/internal/httpload"
	"servesim/internal/httpload/fakevllm"
	quantiles "servesim/internal/quantile"
	"servesim/internal/tracev2"
)

// maxSelfTestStreams bounds the self-test's concurrency.
const maxSelfTestStreams = 4000

// defaultSelfTestStreams is the self-test's concurrency when the run's is
// unknown (an open loop without --max-concurrency).
const defaultSelfTestStreams = 100

// selfTestShape is one self-test: the loopback server's timing, the answer
// length, and how many request durations the steady load lasts.
type selfTestShape struct {
	ttft, itl time.Duration
	tokens    int
	rounds    int
}

// The explicit --self-test uses the reference timing (TTFT 50 ms, ITL
// 10 ms, 24 tokens: 280 ms a request) for four request durations; the
// automatic check before a run lasts two of 55 ms.
func fullSelfTest() selfTestShape {
	return selfTestShape{ttft: 50 * time.Millisecond, itl: 10 * time.Millisecond, tokens: 24, rounds: 4}
}

func quickSelfTest() selfTestShape {
	return selfTestShape{ttft: 20 * time.Millisecond, itl: 5 * time.Millisecond, tokens: 8, rounds: 2}
}

// runSelfTest measures the client's own error: streams concurrent chat
// streams against an in-process fake vLLM on 127.0.0.1 with known TTFT
// and ITL, sent through the same client and dispatcher as a real run. The
// errors include the fake server's lateness on the shared CPUs, so they
// bound the client's error from above.
func runSelfTest(ctx context.Context, streams int, shape selfTestShape) (tracev2.SelfTest, error) {
	st := tracev2.SelfTest{Streams: streams, TTFTUs: shape.ttft.Microseconds(), ITLUs: shape.itl.Microseconds()}
	srv, err := fakevllm.Start(fakevllm.Config{TTFT: shape.ttft, ITL: shape.itl, OutputTokens: shape.tokens, KeepRequests: 1})
	if err != nil {
		return st, fmt.Errorf("self-test: %w", err)
	}
	defer srv.Close()
	c, err := httpload.NewClient(httpload.Config{BaseURL: srv.URL(), MaxConns: max(streams, 1)})
	if err != nil {
		return st, fmt.Errorf("self-test: %w", err)
	}
	defer c.Close()
	if _, err := c.Prewarm(ctx, streams); err != nil {
		return st, fmt.Errorf("self-test: %w", err)
	}
	// An open loop at the rate that keeps streams requests in flight
	// (streams per request duration), for rounds durations: a steady
	// concurrency, as in a run, rather than a burst.
	dur := shape.ttft + time.Duration(shape.tokens-1)*shape.itl
	spacing := max(dur.Microseconds()/int64(max(streams, 1)), 1)
	total := shape.rounds * streams
	jobs := func(yield func(httpload.Job) bool) {
		for i := range total {
			j := httpload.Job{ID: int64(i), IntendedUS: 2000 + int64(i)*spacing, Chat: true, Stream: true,
				Prompt: "self test", MaxTokens: shape.tokens}
			if !yield(j) {
				return
			}
		}
	}
	d, err := httpload.NewDispatcher(c, httpload.DispatchConfig{})
	if err != nil {
		return st, err
	}
	var ttftErr, itlErr, lags []int64
	failed := 0
	_, err = d.Run(ctx, httpload.NewClock(time.Now()), httpload.Plan{Jobs: jobs}, func(r httpload.Result) {
		cs := textChunks(&r)
		if r.Status != httpload.StatusOK || len(cs) != shape.tokens {
			failed++
			return
		}
		ttftErr = append(ttftErr, r.FirstTokenUS-r.SendUS-st.TTFTUs)
		for k := 1; k < len(cs); k++ {
			itlErr = append(itlErr, abs64(cs[k]-cs[k-1]-st.ITLUs))
		}
		lags = append(lags, r.LagUS())
	})
	if err != nil {
		return st, fmt.Errorf("self-test: %w", err)
	}
	if failed > 0 {
		return st, fmt.Errorf("self-test: %d of %d loopback requests failed", failed, total)
	}
	st.TTFTBiasUs, st.TTFTErrorP99Us = quantile(ttftErr, 0.5), quantile(ttftErr, 0.99)
	st.ITLJitterP50Us, st.ITLJitterP99Us = quantile(itlErr, 0.5), quantile(itlErr, 0.99)
	st.DispatchLagP50Us, st.DispatchLagP99Us = quantile(lags, 0.5), quantile(lags, 0.99)
	return st, nil
}

// writeSelfTest prints a self-test's figures on one paragraph.
func writeSelfTest(w io.Writer, st tracev2.SelfTest) {
	fmt.Fprintf(w, "self-test: %d concurrent streams against a loopback server with TTFT %.1f ms, ITL %.1f ms:\n",
		st.Streams, float64(st.TTFTUs)/1000, float64(st.ITLUs)/1000)
	fmt.Fprintf(w, "  TTFT error   p50 %+.3f ms  p99 %+.3f ms\n", float64(st.TTFTBiasUs)/1000, float64(st.TTFTErrorP99Us)/1000)
	fmt.Fprintf(w, "  ITL jitter   p50 %.3f ms  p99 %.3f ms\n", float64(st.ITLJitterP50Us)/1000, float64(st.ITLJitterP99Us)/1000)
	fmt.Fprintf(w, "  dispatch lag p50 %.3f ms  p99 %.3f ms\n", float64(st.DispatchLagP50Us)/1000, float64(st.DispatchLagP99Us)/1000)
}

// quantile is the q-quantile of xs (sorted in place) by the suite's one
// percentile rule (internal/quantile), rounded to whole microseconds; 0
// when empty.
func quantile(xs []int64, q float64) int64 {
	slices.Sort(xs)
	return int64(math.Round(quantiles.Sorted(xs, 100*q)))
}

func abs64(x int64) int64 { return max(x, -x) }
