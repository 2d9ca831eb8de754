// Package blistest is test support: it loads a trace header the way BLIS's
// strict loader does, so that tests of every command can check that a
// header written for BLIS (--blis-compatible-header) loads there. Only
// _test files import it.
package blistest
