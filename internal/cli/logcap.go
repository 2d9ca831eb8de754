package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"servesim/internal/clip"
)

// Bounds on what a command writes to stderr, whatever its input: a
// malformed file must not flood the terminal or forge lines on it.
const (
	// maxLogWarnings is the number of warnings (and errors) logged before
	// the rest are only counted; the count is logged when the command ends.
	maxLogWarnings = 100
	// maxTextBytes bounds a log value, the message included, and the final
	// error line.
	maxTextBytes = 1000
)

// capState counts the warnings a command logged.
type capState struct {
	mu      sync.Mutex
	shown   int
	dropped int
}

// capHandler passes records on until maxLogWarnings warnings have been
// written; later warnings are counted in state. Records below warning
// level always pass.
type capHandler struct {
	slog.Handler
	state *capState
}

func (h *capHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.state.mu.Lock()
		full := h.state.shown >= maxLogWarnings
		if full {
			h.state.dropped++
		} else {
			h.state.shown++
		}
		h.state.mu.Unlock()
		if full {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h *capHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &capHandler{Handler: h.Handler.WithAttrs(attrs), state: h.state}
}

func (h *capHandler) WithGroup(name string) slog.Handler {
	return &capHandler{Handler: h.Handler.WithGroup(name), state: h.state}
}

// flush logs how many warnings were not shown, if any.
func (s *capState) flush(log *slog.Logger) {
	s.mu.Lock()
	n := s.dropped
	s.dropped = 0
	s.mu.Unlock()
	if n == 0 {
		return
	}
	h := log.Handler()
	if c, ok := h.(*capHandler); ok {
		h = c.Handler // past the cap: this line is the last word on it
	}
	slog.New(h).Warn(fmt.Sprintf("%d more warnings not shown", n))
}

// boundText cuts s to maxTextBytes (on a character boundary).
func boundText(s string) string { return clip.Text(s, maxTextBytes) }

// errorLine is err's text made safe for one line of stderr: control
// characters escaped (a CR or a newline in echoed input would forge a line
// of its own) and the length bounded.
func errorLine(text string) string {
	if strings.ContainsFunc(text, isControl) {
		var b strings.Builder
		for _, r := range text {
			if isControl(r) {
				fmt.Fprintf(&b, "\\x%02x", r)
				continue
			}
			b.WriteRune(r)
		}
		text = b.String()
	}
	return boundText(text)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
