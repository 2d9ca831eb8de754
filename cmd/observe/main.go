package main

import (
	"context"
	"io"
	"os"

	"servesim/internal/cli"
)

func main() { os.Exit(cli.Main("observe", run)) }

// run is the testable entry point: everything the process gives a command
// arrives as arguments.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return cli.Run(ctx, command(), args, cli.IO{In: stdin, Out: stdout, Err: stderr})
}
