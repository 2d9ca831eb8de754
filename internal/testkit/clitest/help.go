package clitest

import (
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
)

// CheckHelp fails tb for every flag of cmd whose help line (as --help
// prints it, other names included) states a default more than once, as in
// "(default 1) (default: 0)", and for a name two flags share.
func CheckHelp(tb testing.TB, cmd cli.Command) {
	tb.Helper()
	owner := map[string]string{}
	for _, f := range cmd.AllFlags() {
		if v, ok := f.(ucli.VisibleFlag); ok && !v.IsVisible() {
			continue // hidden: --help does not show it
		}
		line := f.String()
		if n := strings.Count(strings.ToLower(line), "default"); n > 1 {
			tb.Errorf("%s: the help of --%s states %d defaults: %s", cmd.Name, f.Names()[0], n, line)
		}
		for _, name := range f.Names() {
			if prev, dup := owner[name]; dup {
				tb.Errorf("%s: --%s names both --%s and --%s", cmd.Name, name, prev, f.Names()[0])
			}
			owner[name] = f.Names()[0]
		}
	}
	if len(owner) == 0 {
		tb.Errorf("%s has no flags", cmd.Name)
	}
}

// CheckCompletion fails tb unless cmd writes a completion script for every
// shell that names each of its flags (every name, as typed) and those of
// its subcommands, and each subcommand.
func CheckCompletion(tb testing.TB, cmd cli.Command) {
	tb.Helper()
	for _, shell := range cli.Shells() {
		var b strings.Builder
		if err := cli.WriteCompletion(&b, shell, cmd.Name, cmd); err != nil {
			tb.Fatalf("%s --completion %s: %v", cmd.Name, shell, err)
		}
		script := b.String()
		for _, c := range append([]cli.Command{cmd}, cmd.Subcommands...) {
			if word := c.Name[strings.LastIndex(c.Name, " ")+1:]; c.Name != cmd.Name && !strings.Contains(script, word) {
				tb.Errorf("%s script of %s lacks the subcommand %s", shell, cmd.Name, c.Name)
			}
			for _, f := range c.AllFlags() {
				if v, ok := f.(ucli.VisibleFlag); ok && !v.IsVisible() {
					continue
				}
				for _, n := range f.Names() {
					typed := "--" + n
					switch {
					case len(n) == 1 && shell == "fish":
						typed = "-s " + n
					case len(n) == 1:
						typed = "-" + n
					case shell == "fish":
						typed = "-l " + n
					}
					if !strings.Contains(script, typed) {
						tb.Errorf("%s script of %s lacks %s (flag --%s)", shell, c.Name, typed, f.Names()[0])
					}
				}
			}
		}
	}
}
