package cli

import (
	ucli "github.com/urfave/cli/v2"

	"servesim/internal/flagspec"
)

// Flags shared by name across binaries. Each call returns a fresh flag:
// urfave/cli flags hold parse state, so they must not be shared globals.

// QuietFlag silences progress and info logs.
func QuietFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "quiet", Category: flagspec.CatGeneral, Aliases: []string{"q"}, Usage: "no progress bar, only warnings and errors on stderr"}
}

// LogLevelFlag selects the stderr log level.
func LogLevelFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "log-level", Category: flagspec.CatGeneral, Value: "info", Usage: "stderr log level: debug, info, warn, error"}
}

// SeedSpec describes the random seed shared by run, observe and calibrate
// fit, for SpecValues (a workload reads it with its own flags).
func SeedSpec() flagspec.Flag {
	return flagspec.Flag{Name: "seed", Kind: flagspec.Int64, Default: int64(42), Usage: "random seed; the same inputs and seed give byte-identical output"}
}

// SeedFlag is the random seed shared by run, observe and calibrate fit.
func SeedFlag() ucli.Flag { return specFlag(SeedSpec()) }

// OutputFlag names the data output; "-" is stdout.
func OutputFlag(usage string) ucli.Flag {
	return &ucli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: usage}
}

// FormatFlag chooses the stdout format among the given values.
func FormatFlag(def, usage string, choices ...string) ucli.Flag {
	return &ChoiceFlag{StringFlag: &ucli.StringFlag{Name: "format", Value: def, Usage: usage}, Values: choices}
}

// ChoiceFlag is a string flag that takes one of a known set of values,
// which the completion scripts offer: the flag carries them, so they are
// written once, where the flag is defined.
type ChoiceFlag struct {
	*ucli.StringFlag
	Values []string
}

// Choices are the values the flag takes.
func (f *ChoiceFlag) Choices() []string { return f.Values }
