package input

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"servesim/internal/exitcode"
	"servesim/internal/tracev2"
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
// trace becomes stdin ("-", *stdin), the others copies.
func openPipes(path, header, data *string, stdin *io.Reader) (p pipes, err error) {
	defer func() {
		if err != nil {
			p.discard()
		}
	}()
	if isPipe(*path) {
		f, err := os.Open(*path)
		if err != nil {
			return p, exitcode.AsUsage(err)
		}
		p.stdin = f
		p.renames = append(p.renames, rename{tracev2.StdinName, *path})
		*path, *stdin = "-", f
	}
	for i, q := range []*string{header, data} {
		if !isPipe(*q) {
			continue
		}
		// A header larger than the reader's bound is an error anyway: copy
		// no more than one byte past it. The data is copied whole, as
		// stdin is.
		limit := int64(-1)
		if i == 0 {
			limit = tracev2.MaxHeaderBytes + 1
		}
		copied, err := copyPipe(*q, limit)
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

// isPipe reports whether path names a pipe (a FIFO, bash's <(...)),
// whose bytes can be read once only. Devices are left to the readers,
// which read them once and bound what they take: /dev/zero copied to a
// file would fill the disk. A path that cannot be read is left to the
// reader's message.
func isPipe(path string) bool {
	if path == "" || path == "-" {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && st.Mode()&os.ModeNamedPipe != 0
}

// copyPipe copies the pipe at path (up to limit bytes when limit ≥ 0) to a
// temporary file and returns its path (also on an error, to be removed).
func copyPipe(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", exitcode.AsUsage(err)
	}
	defer f.Close()
	var src io.Reader = f
	if limit >= 0 {
		src = io.LimitReader(f, limit)
	}
	dst, err := os.CreateTemp("", "trace-pipe-*")
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

// attach hands the pipes to the trace read from them, or discards them
// when there is none; err then names the paths given.
func (p pipes) attach(t *Trace, err error) (*Trace, error) {
	if t == nil {
		p.discard()
		return nil, p.named(err)
	}
	t.pipes = p
	t.spools = append(t.spools, p.spools...)
	if p.stdin != nil && t.Name == tracev2.StdinName {
		t.Name = p.renames[0].to
	}
	return t, err
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

func (e *renamedErr) Error() string { return renamed(e.err.Error(), e.renames) }

func (e *renamedErr) Unwrap() error { return e.err }

// renamed replaces the stand-ins in s by the paths given.
func renamed(s string, renames []rename) string {
	for _, r := range renames {
		s = strings.ReplaceAll(s, r.from, r.to)
	}
	return s
}

// logger is log with the pipes' stand-ins replaced by the paths given in
// every message and string attribute.
func (p pipes) logger(log *slog.Logger) *slog.Logger {
	if len(p.renames) == 0 {
		return log
	}
	return slog.New(renaming{h: log.Handler(), renames: p.renames})
}

// renaming is logger's handler.
type renaming struct {
	h       slog.Handler
	renames []rename
}

func (r renaming) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r renaming) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, renamed(rec.Message, r.renames), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		if a.Value.Kind() == slog.KindString {
			a.Value = slog.StringValue(renamed(a.Value.String(), r.renames))
		}
		out.AddAttrs(a)
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r renaming) WithAttrs(as []slog.Attr) slog.Handler {
	return renaming{h: r.h.WithAttrs(as), renames: r.renames}
}

func (r renaming) WithGroup(name string) slog.Handler {
	return renaming{h: r.h.WithGroup(name), renames: r.renames}
}
