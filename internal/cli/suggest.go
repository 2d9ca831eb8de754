package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/exitcode"
	"servesim/internal/suggest"
)

// undefinedPrefix starts urfave/cli's error for an unknown flag.
const undefinedPrefix = "flag provided but not defined: "

// usageError is the exit-2 error for a flag parsing failure; an unknown
// flag is named as the user typed it, with the nearest flag when one is
// near enough ("did you mean --max-num-seqs?").
func usageError(err error, flags []ucli.Flag) error {
	name, ok := strings.CutPrefix(err.Error(), undefinedPrefix)
	if !ok {
		return exitcode.Usagef("%v (see --help)", err)
	}
	name = strings.TrimLeft(name, "-")
	if s := suggestFlag(flags, name); s != "" {
		return exitcode.Usagef("unknown flag --%s: did you mean %s? (see --help)", name, s)
	}
	return exitcode.Usagef("unknown flag --%s (see --help)", name)
}

// suggestFlag is the name of flags nearest to typed (suggest.Closest), with
// its dashes, or "".
func suggestFlag(flags []ucli.Flag, typed string) string {
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	s := suggest.Closest(typed, names)
	switch {
	case s == "":
		return ""
	case len(s) == 1:
		return "-" + s
	}
	return "--" + s
}
