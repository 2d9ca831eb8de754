package cli

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/exitcode"
)

func TestReorderArgs(t *testing.T) {
	flags := []ucli.Flag{
		&ucli.StringFlag{Name: "model", Aliases: []string{"m"}},
		&ucli.BoolFlag{Name: "quiet"},
	}
	tests := []struct {
		in, want []string
	}{
		{[]string{"p"}, []string{"p"}},
		{[]string{"p", "a.csv"}, []string{"p", "--", "a.csv"}},
		{[]string{"p", "a.csv", "--quiet", "--model", "x", "b"}, []string{"p", "--quiet", "--model", "x", "--", "a.csv", "b"}},
		{[]string{"p", "a.csv", "-m=x"}, []string{"p", "-m=x", "--", "a.csv"}},
		{[]string{"p", "-", "--quiet"}, []string{"p", "--quiet", "--", "-"}},
		{[]string{"p", "a", "--", "--quiet"}, []string{"p", "--", "a", "--quiet"}},
	}
	for _, tt := range tests {
		if got := reorderArgs(flags, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("reorderArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func testCommand(got *[]string) Command {
	return Command{
		Name:  "t",
		Usage: "test",
		Flags: []ucli.Flag{&ucli.StringFlag{Name: "model"}},
		Action: func(_ context.Context, c *ucli.Context, io IO, log *slog.Logger) error {
			*got = append([]string{c.String("model"), fmt.Sprint(c.Bool("quiet"))}, c.Args().Slice()...)
			return nil
		},
	}
}

func TestRunParsesFlagsAfterPositionals(t *testing.T) {
	var got []string
	var out, errb bytes.Buffer
	err := Run(context.Background(), testCommand(&got), []string{"t", "x.csv", "--model", "m1", "-q"}, IO{Out: &out, Err: &errb})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"m1", "true", "x.csv"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRunUnknownFlagIsUsageError(t *testing.T) {
	var got []string
	var out, errb bytes.Buffer
	err := Run(context.Background(), testCommand(&got), []string{"t", "--nope"}, IO{Out: &out, Err: &errb})
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "-nope") {
		t.Fatalf("err = %v (code %d), want usage error naming the flag", err, exitcode.Of(err))
	}
	if got != nil {
		t.Error("action ran despite the bad flag")
	}
}

// TestRunOwnNameIsNoSubcommand: `t t --model m1` (BLIS's `blis run ...`
// habit) says what was meant instead of "too many arguments".
func TestRunOwnNameIsNoSubcommand(t *testing.T) {
	var got []string
	var out, errb bytes.Buffer
	err := Run(context.Background(), testCommand(&got), []string{"t", "t", "--model", "m1"}, IO{Out: &out, Err: &errb})
	want := "servesim's t takes no subcommand 't'; did you mean: t --model m1"
	if exitcode.Of(err) != exitcode.Usage || err == nil || err.Error() != want {
		t.Fatalf("err = %v (code %d), want %q", err, exitcode.Of(err), want)
	}
	if got != nil {
		t.Error("action ran")
	}
}

func TestRunVersionAndHelp(t *testing.T) {
	var got []string
	for _, arg := range []string{"--version", "--help"} {
		var out, errb bytes.Buffer
		if err := Run(context.Background(), testCommand(&got), []string{"t", arg}, IO{Out: &out, Err: &errb}); err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		want := Version
		if arg == "--help" {
			want = "--log-level"
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("%s printed %q, want it to contain %q", arg, out.String(), want)
		}
	}
}

func TestBadLogLevel(t *testing.T) {
	var got []string
	var out, errb bytes.Buffer
	err := Run(context.Background(), testCommand(&got), []string{"t", "--log-level", "loud"}, IO{Out: &out, Err: &errb})
	if exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("err = %v, want usage error", err)
	}
}
