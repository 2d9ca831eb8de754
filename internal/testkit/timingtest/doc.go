// Package timingtest is test support for the tests that assert
// sub-millisecond client timing against an in-process fake server (the
// httpload client, the observe command): it retries a measurement, and tells
// a client at fault from a machine too loaded to keep time, skipping rather
// than failing in the second case.
//
// Only _test.go files import it. It must never know what is measured (no
// httpload or fake-server types): the measurement is a function that reports
// whether its check held and whether the machine was loaded.
package timingtest
