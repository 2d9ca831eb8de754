// Package cli holds what the four commands share at their edge: an error
// reported on stderr with its exit code (internal/exitcode), the urfave/cli
// application shell (help grouped under headings, version, usage errors with
// did-you-mean, flags after positional arguments), common flags, logging,
// progress bars, shell completion and '-' file handling.
//
// A package that owns settings describes its flags without a flag library
// (internal/flagspec); SpecFlags turns the descriptions into urfave/cli flags
// and SpecValues hands back the values given, so the owner reads them itself.
// A description may make a flag a question the command answers instead of
// running (flagspec's Answer), and a command names the values completion
// offers (Command.Choices).
//
// It is the only internal package that imports urfave/cli and progressbar.
// It imports no package of the domain, only leaves (flagspec, fanout, clip,
// outfile, suggest): the domain's flags reach it as descriptions. The one
// exception is sweepbridge.go, the flag readers the sweep commands call by
// their cli names. It never calls os.Exit; main does.
package cli
