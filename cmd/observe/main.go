// Command observe loads a live OpenAI-compatible server (vLLM) with a
// workload or a played trace and records every request as a TraceV2 trace.
// It turns its flags into one live.Config and calls live.Run; everything
// else is in internal/live.
package main

import (
	"context"
	"io"
	"os"
	"runtime/debug"

	"servesim/internal/cli"
)

func main() {
	// GC pauses dominated the TTFT p99 at 100 concurrent streams: collect
	// less often (the heap is small; memory grows about fivefold at most).
	debug.SetGCPercent(400)
	os.Exit(cli.MainAbortable("observe", run))
}

// run is the testable entry point: everything the process gives a command
// arrives as arguments.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return cli.Run(ctx, command(), args, cli.IO{In: stdin, Out: stdout, Err: stderr})
}
