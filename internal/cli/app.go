package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/exitcode"
)

// Version is the suite's version, printed by every binary's --version.
const Version = "0.1.0"

// IO is what a command reads and writes. Commands never touch os.Stdin,
// os.Stdout or os.Stderr directly, so tests run them in-process.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// StdinName is how errors name standard input.
const StdinName = "<stdin>"

// Command describes one binary.
type Command struct {
	Name        string
	Usage       string // one line: what the binary is for
	ArgsUsage   string
	Description string // longer text; include a real pipeline example
	Flags       []ucli.Flag
	// Subcommands are the commands reached as `NAME SUB ...`: Run
	// dispatches to one when the first argument names it (each has its own
	// flags and help, listed in the parent's help), and the completion
	// scripts offer their names and flags.
	Subcommands []Command
	// Choices are the values the completion scripts offer for flags that
	// take one of a known set, by flag name (the subcommands' flags too).
	Choices map[string][]string
	// Action runs the command. log writes to stderr at the level chosen by
	// --log-level. c gives access to flag values and positional arguments.
	Action func(ctx context.Context, c *ucli.Context, io IO, log *slog.Logger) error
}

// AllFlags are the command's flags, then the flags every binary has, each
// with its other names (FlagAliases).
func (cmd Command) AllFlags() []ucli.Flag {
	return withAliases(append(append([]ucli.Flag{}, cmd.Flags...), QuietFlag(), LogLevelFlag(), CompletionFlag()))
}

// Run parses args (args[0] is the program name) and runs the command. It
// never exits the process: help and --version return nil; bad usage returns
// an error whose ExitCode is 2, naming the nearest flag to an unknown one.
func Run(ctx context.Context, cmd Command, args []string, stdio IO) error {
	for _, sub := range cmd.Subcommands {
		// A subcommand is named by its word ("sweep") or in full
		// ("calibrate fit").
		word := sub.Name[strings.LastIndex(sub.Name, " ")+1:]
		if len(args) > 1 && args[1] == word {
			sub.Name = cmd.Name + " " + word
			return Run(ctx, sub, append([]string{args[0] + " " + args[1]}, args[2:]...), stdio)
		}
	}
	if err := ownNameAsSubcommand(cmd, args); err != nil {
		return err
	}
	if len(cmd.Subcommands) > 0 {
		cmd.Description += "\n\nSubcommands (each has its own --help):\n"
		for _, sub := range cmd.Subcommands {
			cmd.Description += fmt.Sprintf("\n   %s %s   %s", cmd.Name, sub.Name[strings.LastIndex(sub.Name, " ")+1:], sub.Usage)
		}
	}
	flags := cmd.AllFlags()
	app := &ucli.App{
		Name:                   cmd.Name,
		Usage:                  cmd.Usage,
		ArgsUsage:              cmd.ArgsUsage,
		Description:            cmd.Description,
		Version:                Version,
		Flags:                  flags,
		CustomAppHelpTemplate:  helpTemplate(),
		Metadata:               map[string]any{optionsKey: optionsHelp(flags)},
		Reader:                 stdio.In,
		Writer:                 stdio.Out,
		ErrWriter:              stdio.Err,
		HideHelpCommand:        true,
		UseShortOptionHandling: false,
		// urfave/cli calls os.Exit for cli.Exit errors unless this is replaced.
		ExitErrHandler: func(*ucli.Context, error) {},
		OnUsageError: func(_ *ucli.Context, err error, _ bool) error {
			return usageError(err, flags)
		},
		Action: func(c *ucli.Context) error {
			if shell := c.String("completion"); shell != "" {
				if strings.Contains(cmd.Name, " ") {
					return exitcode.Usagef("--completion: ask %s itself, whose script covers its subcommands", strings.Fields(cmd.Name)[0])
				}
				var own []string // the binary's own path, which bash completes too
				if exe, err := os.Executable(); err == nil {
					own = append(own, exe)
				}
				return WriteCompletion(stdio.Out, shell, cmd.Name, cmd, own...)
			}
			log, state, err := newLogger(stdio.Err, c.String("log-level"), c.Bool("quiet"))
			if err != nil {
				return err
			}
			defer state.flush(log)
			return cmd.Action(c.Context, c, stdio, log)
		},
	}
	err := app.RunContext(ctx, reorderArgs(flags, args))
	if errors.Is(err, errAnswered) {
		return nil
	}
	var coded exitcode.Coder
	if err != nil && !errors.As(err, &coded) && strings.HasPrefix(err.Error(), undefinedPrefix) {
		return usageError(err, flags)
	}
	return err
}

// ownNameAsSubcommand refuses `run run ...` (BLIS's `blis run ...` habit)
// with the command line meant: a binary's own name is none of its
// subcommands.
func ownNameAsSubcommand(cmd Command, args []string) error {
	if len(args) < 2 || args[1] != cmd.Name || strings.Contains(cmd.Name, " ") {
		return nil
	}
	meant := strings.Join(append([]string{cmd.Name}, args[2:]...), " ")
	return exitcode.Usagef("servesim's %s takes no subcommand '%s'; did you mean: %s", cmd.Name, cmd.Name, meant)
}

// newLogger returns a text logger on w. quiet raises the level to
// warnings. Every value is bounded in length, and warnings beyond
// maxLogWarnings are only counted in the returned state.
func newLogger(w io.Writer, level string, quiet bool) (*slog.Logger, *capState, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, exitcode.Usagef("--log-level: %q is not one of debug, info, warn, error", level)
	}
	if quiet && lv < slog.LevelWarn {
		lv = slog.LevelWarn
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{
		Level: lv,
		// Time stamps would make stderr differ between identical runs.
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			switch v := a.Value.Resolve(); {
			case v.Kind() == slog.KindString:
				a.Value = slog.StringValue(boundText(v.String()))
			case v.Kind() == slog.KindAny:
				if err, ok := v.Any().(error); ok {
					a.Value = slog.StringValue(boundText(err.Error()))
				}
			}
			return a
		},
	})
	state := &capState{}
	return slog.New(&capHandler{Handler: h, state: state}), state, nil
}

// Positional returns the positional arguments, at most max of them.
func Positional(c *ucli.Context, max int) ([]string, error) {
	args := c.Args().Slice()
	if len(args) > max {
		return nil, exitcode.Usagef("too many arguments: %s (at most %d)", strings.Join(args, " "), max)
	}
	return args, nil
}
