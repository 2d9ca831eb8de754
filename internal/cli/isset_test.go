package cli

import (
	"testing"

	ucli "github.com/urfave/cli/v2"
)

// TestFlagsSetIsIsSet: flagsSet answers as urfave's IsSet does for every
// name of a command's flags — set by their name, by an alias, from the
// environment, or not at all — and for names the command does not define.
func TestFlagsSetIsIsSet(t *testing.T) {
	t.Setenv("SERVESIM_TEST_FROM_ENV", "7")
	for _, args := range [][]string{
		{},
		{"--model", "m", "--max-concurrency", "3", "--on"},
		{"--client-max-concurrency", "3", "--on=false", "--gap", "2"},
		{"-g", "1"},
	} {
		var got, want map[string]bool
		cmd := &ucli.Command{
			Name: "x",
			Flags: []ucli.Flag{
				&ucli.StringFlag{Name: "model"},
				&ucli.IntFlag{Name: "client-max-concurrency", Aliases: []string{"max-concurrency"}},
				&ucli.BoolFlag{Name: "on"},
				&ucli.Float64Flag{Name: "gap", Aliases: []string{"g"}},
				&ucli.IntFlag{Name: "env", EnvVars: []string{"SERVESIM_TEST_FROM_ENV"}},
				&ucli.StringFlag{Name: "unused"},
			},
			Action: func(c *ucli.Context) error {
				s := newFlagsSet(c)
				got, want = map[string]bool{}, map[string]bool{}
				for _, n := range []string{"model", "client-max-concurrency", "max-concurrency", "on", "gap", "g", "env", "unused", "global", "nowhere"} {
					got[n], want[n] = s.isSet(n), c.IsSet(n)
				}
				return nil
			},
		}
		app := &ucli.App{Name: "t", Commands: []*ucli.Command{cmd}, Flags: []ucli.Flag{&ucli.BoolFlag{Name: "global"}}}
		if err := app.Run(append([]string{"t", "--global", "x"}, args...)); err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Fatalf("%v: the command did not run", args)
		}
		for n, w := range want {
			if got[n] != w {
				t.Errorf("%v: isSet(%q) = %v, IsSet says %v", args, n, got[n], w)
			}
		}
		if !want["env"] || !want["global"] {
			t.Errorf("%v: the environment's and the parent's flags are not seen as set: %v", args, want)
		}
	}
}
