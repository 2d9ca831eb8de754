package clitest

import (
	"strings"
	"testing"

	"servesim/internal/cli"
)

// CheckHelp fails tb for every flag of cmd whose help line (as --help
// prints it, other names included) states a default more than once, as in
// "(default 1) (default: 0)", and for a name two flags share.
func CheckHelp(tb testing.TB, cmd cli.Command) {
	tb.Helper()
	owner := map[string]string{}
	for _, f := range cmd.AllFlags() {
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
