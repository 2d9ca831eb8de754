package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"servesim/internal/exitcode"
)

// abortKey carries the second-interrupt channel in a context.
type abortKey struct{}

// WithAbort returns ctx carrying abort, a channel closed when the user asks
// a command that is already draining after an interrupt to stop at once.
// Tests use it to simulate a second Ctrl+C.
func WithAbort(ctx context.Context, abort <-chan struct{}) context.Context {
	return context.WithValue(ctx, abortKey{}, abort)
}

// Aborted is the channel of WithAbort, or nil (never ready) when ctx has none.
func Aborted(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(abortKey{}).(<-chan struct{})
	return ch
}

// abortGrace is how long a command may still take to flush after the second
// interrupt before MainAbortable gives up on it.
const abortGrace = 2 * time.Second

// MainAbortable is Main for commands whose interrupt has two stages, such as
// observe draining requests in flight. The first SIGINT or SIGTERM cancels
// the context (the command stops new work, drains within its bound,
// flushes and returns: exit 130). The second closes the context's Aborted
// channel: the command cancels what is still in flight and returns at once,
// after writing what it has. If it has not returned abortGrace later, or on
// a third signal, MainAbortable returns 130 without waiting, and main exits;
// rows already written stay valid because every row is written whole.
func MainAbortable(prog string, run RunFunc) int {
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	abort := make(chan struct{})
	ctx = WithAbort(ctx, abort)
	done := make(chan error, 1)
	go func() { done <- run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr) }()
	var grace <-chan time.Time
	for n := 0; ; {
		select {
		case err := <-done:
			return Report(prog, err, os.Stderr)
		case s := <-sigs:
			n++
			switch n {
			case 1:
				cancel(fmt.Errorf("interrupted by %v", s))
			case 2:
				close(abort)
				grace = time.After(abortGrace)
			default:
				return Report(prog, exitcode.WithCode(exitcode.Interrupted, errors.New("interrupted again; exiting without waiting")), os.Stderr)
			}
		case <-grace:
			return Report(prog, exitcode.WithCode(exitcode.Interrupted, fmt.Errorf("still busy %v after the second interrupt; exiting", abortGrace)), os.Stderr)
		}
	}
}
