package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"testing"

	"servesim/internal/testkit/clitest"
)

// refArgs is the reference command of docs/performance.md: Qwen3-14B on one H100 at 28
// req/s, prompts 512±128 and outputs 256±64 tokens, constant arrivals,
// seed 42, with the given latency model ("" = the default).
func refArgs(n int, latency string) []string {
	args := []string{"run", "--model", "qwen/qwen3-14b", "--rate", "28", "--num-requests", strconv.Itoa(n),
		"--prompt-tokens", "512", "--prompt-tokens-stdev", "128", "--output-tokens", "256",
		"--output-tokens-stdev", "64", "--seed", "42", "--quiet"}
	if latency != "" {
		args = append(args, "--latency-model", latency)
	}
	return args
}

// BenchmarkRun times the whole `run` command in-process, as main runs it:
// flags, workload generation, the replay adapter, the simulation, the
// metrics and the JSON summary (stdout kept, stderr discarded). It reports
// simulated requests per second of wall and of CPU time, the peak heap
// (clitest.Measure) and allocations. Models: trained-physics (BLIS's
// model; vLLM 0.11 without asynchronous scheduling: the BLIS side-by-side)
// and physics (the default; at 28 req/s one H100 is overloaded, so requests
// queue until the client's timeout).
//
//	go test ./cmd/run -run '^$' -bench 'Run/' -benchtime 1x -benchmem
func BenchmarkRun(b *testing.B) {
	for _, latency := range []string{"trained-physics", "physics"} {
		for _, n := range []int{10_000, 100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/n=%d", latency, n), func(b *testing.B) {
				if n > 10_000 && testing.Short() {
					b.Skip("large sizes skipped in -short mode")
				}
				b.ReportAllocs()
				args := refArgs(n, latency)
				var runs []clitest.Measured
				var out bytes.Buffer
				for i := 0; i < b.N; i++ {
					out.Reset()
					var err error
					runs = append(runs, clitest.Measure(func() {
						err = run(context.Background(), args, bytes.NewReader(nil), &out, io.Discard)
					}))
					if err != nil {
						b.Fatal(err)
					}
				}
				checkSummary(b, out.Bytes(), n)
				clitest.Report(b, n, "req", runs)
			})
		}
	}
}

// checkSummary checks that the summary accounts for every request.
func checkSummary(b *testing.B, out []byte, n int) {
	b.Helper()
	c, err := clitest.ReadCounts(out)
	if err != nil {
		b.Fatal(err)
	}
	if c.Injected != int64(n) || c.TTFTMeanMs <= 0 {
		b.Fatalf("injected %d requests, TTFT mean %v ms: want %d and a positive mean", c.Injected, c.TTFTMeanMs, n)
	}
}
