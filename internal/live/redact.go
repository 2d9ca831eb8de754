package live

import (
	"context"
	"log/slog"

	"servesim/internal/httpload"
)

// redactHandler removes the run's secrets (httpload.Redactor) from every
// log record's message and attribute values before its handler writes it:
// an error a server echoed, or a URL with a password, reaches stderr only
// redacted.
type redactHandler struct {
	h   slog.Handler
	red httpload.Redactor
}

func (r *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.red.Text(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactHandler) attr(a slog.Attr) slog.Attr {
	switch v := a.Value.Resolve(); v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.red.Text(v.String()))
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, r.red.Text(err.Error()))
		}
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = r.attr(g)
		}
		return slog.Group(a.Key, out...)
	}
	return a
}

func (r *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = r.attr(a)
	}
	return &redactHandler{h: r.h.WithAttrs(red), red: r.red}
}

func (r *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: r.h.WithGroup(name), red: r.red}
}

// redactedError is an error whose text has the run's secrets removed; it
// unwraps to the original, so its exit code stays.
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactError redacts err's text (nil stays nil).
func redactError(err error, red httpload.Redactor) error {
	if err == nil {
		return nil
	}
	if msg := red.Text(err.Error()); msg != err.Error() {
		return &redactedError{err: err, msg: msg}
	}
	return err
}
