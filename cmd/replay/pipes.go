package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"servesim/internal/cli"
)

// Pipes. A trace named by a path that is a pipe (bash's <(zcat trace.gz),
// a FIFO) can be read once only, where a file is read more than once (its
// format detected from its first bytes, then imported; a TraceV2 trace
// read to validate it, then replayed). The trace is read as stdin is
// (--trace-header and --trace-data, which can both be pipes, are copied
// to temporary files first), and every message gives the pipe's path.
type pipes struct {
	stdin   *os.File // the trace read as stdin
	spools  []string // copies of the header's and data's pipes
	renames []rename // names in messages -> the paths given
}

type rename struct{ from, to string }

// openPipes opens the pipes among the trace, header and data paths: the
// trace becomes stdin ("-", stdio.In), the others copies.
func openPipes(path, header, data *string, stdio *cli.IO) (p pipes, err error) {
	defer func() {
		if err != nil {
			p.discard()
		}
	}()
	if isPipe(*path) {
		f, err := os.Open(*path)
		if err != nil {
			return p, cli.WithCode(cli.ExitUsage, err)
		}
		p.stdin = f
		p.renames = append(p.renames, rename{cli.StdinName, *path})
		*path, stdio.In = "-", f
	}
	for _, q := range []*string{header, data} {
		if !isPipe(*q) {
			continue
		}
		copied, err := copyPipe(*q)
		if copied != "" {
			p.spools = append(p.spools, copied)
		}
		if err != nil {
			return p, err
		}
		p.renames = append(p.renames, rename{copied, *q})
		*q = copied
	}
	return p, nil
}

// isPipe reports whether path names something other than stdin, a
// regular file or a directory: a pipe or a device, whose bytes can be read
// once only. A path that cannot be read is left to the reader's message.
func isPipe(path string) bool {
	if path == "" || path == "-" {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}

// copyPipe copies the pipe at path to a temporary file and returns its
// path (also on an error, to be removed).
func copyPipe(path string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", cli.WithCode(cli.ExitUsage, err)
	}
	defer src.Close()
	dst, err := os.CreateTemp("", "replay-pipe-*")
	if err != nil {
		return "", fmt.Errorf("copy %s: %w", path, err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return dst.Name(), fmt.Errorf("copy %s: %w", path, err)
	}
	return dst.Name(), nil
}

// attach hands the pipes to the input read from them, or discards them
// when there is none; err then names the paths given.
func (p pipes) attach(in *input, err error) (*input, error) {
	if in == nil {
		p.discard()
		return nil, p.named(err)
	}
	in.pipes = p
	in.spools = append(in.spools, p.spools...)
	if p.stdin != nil && in.name == cli.StdinName {
		in.name = p.renames[0].to
	}
	return in, err
}

func (p pipes) discard() {
	if p.stdin != nil {
		p.stdin.Close()
	}
	for _, s := range p.spools {
		os.Remove(s)
	}
}

// named gives err the paths given for the pipes.
func (p pipes) named(err error) error {
	if err == nil || len(p.renames) == 0 {
		return err
	}
	return &renamedErr{err: err, renames: p.renames}
}

// renamedErr is an error whose message names the paths given instead of
// the pipes' stand-ins.
type renamedErr struct {
	err     error
	renames []rename
}

func (e *renamedErr) Error() string {
	msg := e.err.Error()
	for _, r := range e.renames {
		msg = strings.ReplaceAll(msg, r.from, r.to)
	}
	return msg
}

func (e *renamedErr) Unwrap() error { return e.err }
