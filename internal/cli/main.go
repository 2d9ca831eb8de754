package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// RunFunc is the shape of every command's testable entry point.
type RunFunc func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error

// Main runs a command with the process's arguments and standard streams and
// returns its exit code. The first SIGINT or SIGTERM cancels the context so
// the command can flush and return (exit 130); a second one kills the
// process the default way.
func Main(prog string, run RunFunc) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // restore default handling: the next signal terminates
	}()
	err := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	return Report(prog, err, os.Stderr)
}
