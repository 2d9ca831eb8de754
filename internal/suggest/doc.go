// Package suggest is the suite's one "did you mean": the known name nearest
// to what a user typed (a flag, a YAML key, a sweep grid key, a model name),
// when one is near enough to be a typo of it; and the few names that
// resemble it (sharing a word, or a typo), to list when none is one.
//
// It knows no domain and imports nothing of the suite.
package suggest
