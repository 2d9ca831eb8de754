// Package shareddata is test support: it finds the real measurements kept
// outside the repository, in the shared/data folder beside the module root
// (../shared/data seen from the directory holding go.mod), and skips a test
// or benchmark with a clear message when they are absent, so the suite runs
// on any checkout and uses the real data where it is present.
//
// Only _test.go files import it. It must never know what the data mean
// (formats, importers, simulator): it deals in paths only, and it never
// writes to stdout or stderr.
package shareddata
