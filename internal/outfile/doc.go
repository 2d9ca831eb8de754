// Package outfile writes output files that never look complete when they are
// not, without ever replacing what a path names when that is not a regular
// file.
//
// A regular file (or a name that does not exist yet) is written to a hidden
// temporary sibling, .NAME.tmp*, and renamed over the name on Commit; Abort
// and every error path remove the temporary file. Anything else — a
// character device such as /dev/null, a FIFO, /dev/stdout or another
// descriptor under /proc — is written straight into, as the shell's `>`
// would: renaming over it would replace a device node or a pipe with a
// regular file. A symbolic link is followed, so the link stays and its
// target is what gets replaced.
//
// It is a leaf: it knows no other package of the suite, so that every
// package that writes files (the trace writers of tracev2, the outputs of
// the commands) shares this one implementation.
package outfile
