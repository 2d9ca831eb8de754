package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/exitcode"
)

// TestStderrIsBounded: a command that logs without end, or long values,
// or returns an error carrying control characters, writes a bounded,
// unforgeable stderr.
func TestStderrIsBounded(t *testing.T) {
	cmd := Command{Name: "t", Usage: "test", Action: func(_ context.Context, _ *ucli.Context, _ IO, log *slog.Logger) error {
		for i := range 100_000 {
			log.Warn(fmt.Sprintf("warning %d", i))
		}
		log.Info("after the warnings")
		return errors.New("bad column \"x\r\nlevel=ERROR msg=spoofed\" " + strings.Repeat("y", 5000))
	}}
	var out, errb bytes.Buffer
	err := Run(context.Background(), cmd, []string{"t"}, IO{Out: &out, Err: &errb})
	code := Report("t", err, &errb)
	lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
	if code != exitcode.Failure || len(lines) != maxLogWarnings+3 {
		t.Fatalf("exit %d, %d lines of stderr; want 1 and %d (the warnings shown, the info line, the count, the error)", code, len(lines), maxLogWarnings+3)
	}
	if want := `level=WARN msg="99900 more warnings not shown"`; lines[len(lines)-2] != want {
		t.Errorf("count line %q, want %q", lines[len(lines)-2], want)
	}
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, `t: bad column "x\x0d\x0alevel=ERROR msg=spoofed" yyy`) || !strings.HasSuffix(last, "…") ||
		len(last) > maxTextBytes+40 {
		t.Errorf("error line (%d bytes): %.120q…", len(last), last)
	}

	long := Command{Name: "t", Usage: "test", Action: func(_ context.Context, _ *ucli.Context, _ IO, log *slog.Logger) error {
		log.Warn(strings.Repeat("m", 3000), "value", strings.Repeat("v", 3000), "error", errors.New(strings.Repeat("e", 3000)))
		return nil
	}}
	errb.Reset()
	if err := Run(context.Background(), long, []string{"t"}, IO{Out: &out, Err: &errb}); err != nil {
		t.Fatal(err)
	}
	if n := len(errb.String()); n > 3*(maxTextBytes+40)+60 {
		t.Errorf("a warning with three 3000-byte values took %d bytes", n)
	}
}
