package cli

import (
	"strings"

	ucli "github.com/urfave/cli/v2"
	"github.com/xrash/smetrics"
)

// minSimilarity is the Jaro-Winkler similarity below which no flag is
// suggested: a typo of a flag scores above 0.9, an unrelated word about
// 0.5.
const minSimilarity = 0.8

// undefinedPrefix starts urfave/cli's error for an unknown flag.
const undefinedPrefix = "flag provided but not defined: "

// usageError is the exit-2 error for a flag parsing failure; an unknown
// flag is named as the user typed it, with the nearest flag when one is
// near enough ("did you mean --max-num-seqs?").
func usageError(err error, flags []ucli.Flag) error {
	name, ok := strings.CutPrefix(err.Error(), undefinedPrefix)
	if !ok {
		return Usagef("%v (see --help)", err)
	}
	name = strings.TrimLeft(name, "-")
	if s := suggestFlag(flags, name); s != "" {
		return Usagef("unknown flag --%s: did you mean %s? (see --help)", name, s)
	}
	return Usagef("unknown flag --%s (see --help)", name)
}

// suggestFlag is urfave/cli's nearest flag name to typed (with its dashes),
// or "" when even that one is not similar.
func suggestFlag(flags []ucli.Flag, typed string) string {
	s := ucli.SuggestFlag(flags, typed, true)
	if s == "" || smetrics.JaroWinkler(strings.TrimLeft(s, "-"), typed, 0.7, 4) < minSimilarity {
		return ""
	}
	return s
}
