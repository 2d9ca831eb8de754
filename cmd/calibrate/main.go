package main

import (
	"context"
	"io"
	"os"

	"servesim/internal/cli"
)

func main() { os.Exit(cli.Main("calibrate", run)) }

// run is the testable entry point: everything the process gives a command
// arrives as arguments.
// `calibrate fit ...` is the fitting subcommand (fitcmd.go), `calibrate
// steps ...` the step table (stepscmd.go), `calibrate compare ...` the A/B
// of two real runs (comparecmd.go); anything else grades a simulation.
// (A trace file named fit, steps or compare is ./fit, ./steps or ./compare.)
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	stdio := cli.IO{In: stdin, Out: stdout, Err: stderr}
	if len(args) > 1 && args[1] == "fit" {
		return cli.Run(ctx, fitCommand(), append([]string{args[0] + " fit"}, args[2:]...), stdio)
	}
	if len(args) > 1 && args[1] == "steps" {
		return cli.Run(ctx, stepsCommand(), append([]string{args[0] + " steps"}, args[2:]...), stdio)
	}
	if len(args) > 1 && args[1] == "compare" {
		return cli.Run(ctx, compareCommand(), append([]string{args[0] + " compare"}, args[2:]...), stdio)
	}
	return cli.Run(ctx, command(), args, stdio)
}
