// Package infile reads an input that is taken in whole (a configuration
// file, a sweep document, a trace header's sidecar) within a bound given by
// the caller, so that /dev/zero, an endless pipe or a file of gigabytes is
// refused after at most the bound plus one byte has been read, with one
// line naming the file and the bound (exit 2), instead of exhausting memory.
//
// It is a leaf: it knows nothing of what the bytes hold, and every reader
// of a whole input shares it.
package infile
