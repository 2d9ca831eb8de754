// Package shareddata is test support: it finds the real measurements a test
// or benchmark reads, first in the repository's own testdata/ folder (small
// samples, committed with their license notes, so a fresh clone runs every
// test and `make fidelity` with nothing beside it), then in the shared/data
// folder beside the module root (../shared/data seen from the directory
// holding go.mod: the whole data sets, where a checkout has them), and skips
// with a clear message when neither holds them.
//
// Only _test.go files import it. It must never know what the data mean
// (formats, importers, simulator): it deals in paths only, and it never
// writes to stdout or stderr.
package shareddata
