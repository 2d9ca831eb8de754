// Package flagspec describes command-line flags without a flag library: a
// name, other names, help text, a help heading, a kind and a default. A
// package that owns settings (the deployment's keys) describes its flags
// here; internal/cli turns the descriptions into urfave/cli flags and hands
// back the values given, so that the owner never imports a flag library.
//
// It knows no domain and imports nothing of the suite.
package flagspec
