// Package clitest is test support for the commands under cmd/: it runs a
// command's entry point in-process the way main does (captured stdout and
// stderr, the error reported on stderr, the exit code), builds the real
// binaries once per test process for tests that need a separate process,
// and compares output with golden files under testdata/ (rewritten when the
// test binary's -update flag is set).
//
// Only the commands' _test.go files import it. It must never know any one
// command's flags or output formats, and it never writes to the process's
// stdout or stderr.
package clitest
