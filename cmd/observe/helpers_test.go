package main

import (
	"context"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"servesim/internal/httpload/fakevllm"
	"servesim/internal/quantile"
	"servesim/internal/testkit/clitest"
	"servesim/internal/tracev2"
)

// startFake runs a fake vLLM for one test.
func startFake(t *testing.T, cfg fakevllm.Config) *fakevllm.Server {
	t.Helper()
	srv, err := fakevllm.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// testCtx bounds a test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// observeIn runs the command in-process with args (no program name).
func observeIn(ctx context.Context, args ...string) clitest.Result {
	return clitest.Run(ctx, "observe", run, nil, args...)
}

// loadStream loads a single-stream trace held in a string.
func loadStream(t *testing.T, text string) *tracev2.Trace {
	t.Helper()
	tr, err := tracev2.Load(tracev2.Input{Path: "-", Stdin: strings.NewReader(text)}, tracev2.Options{})
	if err != nil {
		t.Fatalf("load single stream: %v\n%s", err, head(text, 2000))
	}
	return tr
}

// loadFiles loads a two-file trace PREFIX.yaml + PREFIX.csv.
func loadFiles(t *testing.T, prefix string) *tracev2.Trace {
	t.Helper()
	tr, err := tracev2.Load(tracev2.Input{Path: prefix + ".csv"}, tracev2.Options{})
	if err != nil {
		t.Fatalf("load %s: %v", prefix, err)
	}
	return tr
}

func head(s string, n int) string { return s[:min(len(s), n)] }

// baseArgs point the command at srv with a small flag-synthesised workload.
func baseArgs(srv *fakevllm.Server, extra ...string) []string {
	return append([]string{"--url", srv.URL(), "--quiet", "--prompt-tokens", "8", "--prompt-tokens-stdev", "0",
		"--output-tokens", "4", "--output-tokens-stdev", "0"}, extra...)
}

// bins holds the commands built by this test process (test-only state,
// removed by TestMain).
var bins clitest.Binaries

func TestMain(m *testing.M) {
	code := m.Run()
	bins.Remove()
	os.Exit(code)
}

// quantile64 is the q-quantile of xs (0 when empty) by the suite's one
// percentile rule, the self-test's, on a sorted copy.
func quantile64(xs []int64, q float64) int64 {
	c := slices.Clone(xs)
	slices.Sort(c)
	return int64(math.Round(quantile.Sorted(c, 100*q)))
}

func abs64(x int64) int64 { return max(x, -x) }

func stringsReader(s string) *strings.Reader { return strings.NewReader(s) }
