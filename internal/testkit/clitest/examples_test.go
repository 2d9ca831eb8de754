package clitest

import (
	"context"
	"log/slog"
	"reflect"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"servesim/internal/cli"
)

// TestCheckExamples: the examples are found (continuations joined,
// pipelines split, quotes removed, prose left out) and a line with an
// unknown flag or a bad value fails.
func TestCheckExamples(t *testing.T) {
	cmd := cli.Command{Name: "run", Usage: "u",
		Flags: []ucli.Flag{&ucli.IntFlag{Name: "n"}, &ucli.StringFlag{Name: "slo"}},
		Action: func(context.Context, *ucli.Context, cli.IO, *slog.Logger) error {
			t.Error("an example's action ran")
			return nil
		},
		Description: `run does things; run is prose here.

   # one:
   run --n 3 \
       --slo 'ttft.p99<1s,itl.p99<5ms' | replay - --x
   X=1 run --n 4
   run --nope 1
   run --n three`,
	}
	want := [][]string{{"run", "--n", "3", "--slo", "ttft.p99<1s,itl.p99<5ms"}, {"run", "--n", "4"}, {"run", "--nope", "1"}, {"run", "--n", "three"}}
	if got := Examples(cmd); !reflect.DeepEqual(got, want) {
		t.Fatalf("examples %q, want %q", got, want)
	}
	rec := &recordingTB{TB: t}
	if n := CheckExamples(rec, cmd); n != 4 || rec.errors != 2 {
		t.Errorf("checked %d lines with %d failures, want 4 and 2 (--nope, --n three)", n, rec.errors)
	}
}
