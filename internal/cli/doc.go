// Package cli holds what the four commands share at their edge: exit codes and
// the errors that carry them, the urfave/cli application shell (help, version,
// usage errors, flags after positional arguments), common flags, logging,
// progress bars and '-' file handling.
//
// It is the only internal package that imports urfave/cli and progressbar. It
// never knows about the simulator, the HTTP load generator or reports: commands
// pass it their flags and actions. It never calls os.Exit; main does.
package cli
