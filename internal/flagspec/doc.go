// Package flagspec describes command-line flags without a flag library: a
// name, other names, help text, a help heading, a kind, a default, and for a
// question flag (--list-models) the answer that replaces the command. A
// package that owns settings (the deployment's keys, the workload's shape,
// the simulated client) describes its flags here; internal/cli turns the descriptions into urfave/cli flags and hands
// back the values given, so that the owner never imports a flag library.
//
// It knows no domain and imports nothing of the suite.
package flagspec
