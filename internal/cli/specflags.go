package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/flagspec"
)

// SpecCommand turns a command description into a Command: its flags are
// the description's, and its action hands their values to Run.
func SpecCommand(d flagspec.Command) Command {
	return Command{Name: d.Name, Usage: d.Usage, ArgsUsage: d.ArgsUsage, Description: d.Description, Flags: SpecFlags(d.Flags),
		Action: func(_ context.Context, c *ucli.Context, stdio IO, log *slog.Logger) error {
			return d.Run(SpecValues(c, d.Flags), c.Args().Slice(), stdio.In, stdio.Out, log)
		}}
}

// SpecFlags turns flag descriptions into urfave/cli flags: the bridge that
// lets a package describe its flags without importing a flag library.
func SpecFlags(specs []flagspec.Flag) []ucli.Flag {
	out := make([]ucli.Flag, len(specs))
	for i, s := range specs {
		out[i] = specFlag(s)
	}
	return out
}

func specFlag(s flagspec.Flag) ucli.Flag {
	switch s.Kind {
	case flagspec.String:
		v, _ := s.Default.(string)
		f := &ucli.StringFlag{Name: s.Name, Aliases: s.Aliases, Usage: s.Usage, Category: s.Category, Value: v, DefaultText: s.DefaultText, Hidden: s.Hidden}
		if s.Choices != nil {
			return &ChoiceFlag{StringFlag: f, Values: s.Choices}
		}
		return f
	case flagspec.Bool:
		v, _ := s.Default.(bool)
		return &ucli.BoolFlag{Name: s.Name, Aliases: s.Aliases, Usage: s.Usage, Category: s.Category, Value: v, DefaultText: s.DefaultText, Hidden: s.Hidden,
			Action: answer(s.Answer)}
	case flagspec.Int:
		v, _ := s.Default.(int)
		return &ucli.IntFlag{Name: s.Name, Aliases: s.Aliases, Usage: s.Usage, Category: s.Category, Value: v, DefaultText: s.DefaultText, Hidden: s.Hidden}
	case flagspec.Int64:
		v, _ := s.Default.(int64)
		return &ucli.Int64Flag{Name: s.Name, Aliases: s.Aliases, Usage: s.Usage, Category: s.Category, Value: v, DefaultText: s.DefaultText, Hidden: s.Hidden}
	case flagspec.Float64:
		v, _ := s.Default.(float64)
		return &ucli.Float64Flag{Name: s.Name, Aliases: s.Aliases, Usage: s.Usage, Category: s.Category, Value: v, DefaultText: s.DefaultText, Hidden: s.Hidden}
	case flagspec.Duration:
		v, _ := s.Default.(time.Duration)
		return &ucli.DurationFlag{Name: s.Name, Aliases: s.Aliases, Usage: s.Usage, Category: s.Category, Value: v, DefaultText: s.DefaultText, Hidden: s.Hidden}
	case flagspec.Strings:
		return &ucli.GenericFlag{Name: s.Name, Aliases: s.Aliases, Usage: s.Usage, Category: s.Category, Value: &repeated{}, DefaultText: s.DefaultText, Hidden: s.Hidden}
	}
	panic(fmt.Sprintf("flag --%s: unknown kind %d", s.Name, s.Kind))
}

// repeated collects the values of a repeatable flag without splitting them
// at commas (urfave's slice flags would).
type repeated struct{ values []string }

func (r *repeated) Set(v string) error { r.values = append(r.values, v); return nil }
func (r *repeated) String() string     { return strings.Join(r.values, " ") }

// errAnswered ends a command whose question flag was answered (flagspec's
// Answer): Run returns success without running the command's action.
var errAnswered = errors.New("answered")

// answer is the urfave/cli action of a question flag: given true, write
// the reply on stdout and end the command. --completion, answered by the
// shell's own action, goes first.
func answer(reply func(value func(string) any, w io.Writer) error) func(*ucli.Context, bool) error {
	if reply == nil {
		return nil
	}
	return func(c *ucli.Context, on bool) error {
		if !on || c.String(completionFlag) != "" {
			return nil
		}
		if err := reply(c.Value, c.App.Writer); err != nil {
			return err
		}
		return errAnswered
	}
}

// SpecValues are the flags of specs that the command line gave explicitly
// (by any of their names), each as its kind's Go type.
func SpecValues(c *ucli.Context, specs []flagspec.Flag) flagspec.Values {
	set := newFlagsSet(c)
	out := flagspec.Values{}
	for _, s := range specs {
		if !set.isSet(s.Name) {
			continue
		}
		switch s.Kind {
		case flagspec.String:
			out[s.Name] = c.String(s.Name)
		case flagspec.Bool:
			out[s.Name] = c.Bool(s.Name)
		case flagspec.Int:
			out[s.Name] = c.Int(s.Name)
		case flagspec.Int64:
			out[s.Name] = c.Int64(s.Name)
		case flagspec.Float64:
			out[s.Name] = c.Float64(s.Name)
		case flagspec.Duration:
			out[s.Name] = c.Duration(s.Name)
		case flagspec.Strings:
			if r, ok := c.Generic(s.Name).(*repeated); ok {
				out[s.Name] = append([]string(nil), r.values...)
			}
		}
	}
	return out
}
